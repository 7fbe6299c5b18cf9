// Structured JSON logs. Credentials never reach a log line: headers and body fields that carry
// secrets are censored by path, whatever the log call.
import { pino, type DestinationStream, type Logger } from 'pino';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.current_password',
  '*.new_password',
  '*.access_token',
  '*.refresh_token',
  '*.secret',
  '*.api_key',
];

/** `bindings`: more fields on every line (the process id, when several processes share one output: WORKERS). */
export function createLogger(level: string, destination?: DestinationStream, bindings: Record<string, unknown> = {}): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: { service: 'backoffice-api', ...bindings },
      timestamp: isoTime,
    },
    destination,
  );
}

/** How long a line may wait in standard output's buffer before it is written. */
export const STDOUT_FLUSH_MS = 100;

/** PIPE_BUF on Linux: a write(2) of at most this many bytes to a pipe is never interleaved with another process's. */
const ATOMIC_PIPE_WRITE = 4096;

/**
 * Standard output written in blocks rather than with a write(2) per line: the access log writes a
 * line per request, and its system call was the largest piece of what the service adds to a GET
 * over its floor (docs/BENCHMARKS.md). Each write holds whole lines and at most
 * PIPE_BUF bytes, so that the processes of WORKERS > 1, which share one pipe, never cut into each
 * other's lines (only a single line longer than that can be). A line waits at most
 * STDOUT_FLUSH_MS; what is buffered is written when the process exits, however it exits but by
 * SIGKILL or a crash of Node itself, which lose at most those 100 ms of lines.
 */
export function bufferedStdout(): DestinationStream {
  // The wait is sonic-boom's `periodicFlush`: a flush without a callback writes what is buffered
  // and nothing more. Its flushSync also fsyncs the file descriptor: with standard output
  // redirected to a file, ten fsyncs a second, each stopping the event loop until the disk
  // answers. So flushSync is kept for the exit, once.
  const stream = pino.destination({ dest: 1, sync: true, minLength: ATOMIC_PIPE_WRITE - 1024, maxWrite: ATOMIC_PIPE_WRITE, periodicFlush: STDOUT_FLUSH_MS });
  process.once('exit', () => {
    // One write first: flushSync retries every error but EAGAIN and EBUSY forever (sonic-boom
    // 4.2.1), EPIPE included, when nobody reads standard output any more (a log shipper stopped
    // by the same SIGTERM). A write that fails with EPIPE makes pino turn the stream's
    // writes and flushSync into no-ops, and the process exits, those lines dropped.
    try {
      stream.flush();
      stream.flushSync();
    } catch {
      // The stream was ended, or failed otherwise: nothing more can be written at exit.
    }
  });
  return stream;
}

/** The second of the last line's time, and its ISO text up to the milliseconds (`2026-11-27T22:58:01.`). */
let isoSecond = Number.NaN;
let isoSecondText = '';

/**
 * pino's isoTime (`,"time":"2026-11-27T22:58:01.123Z"`), the same text for the same instant, with
 * the date worked out once a second rather than by a Date and its toISOString for every line (a
 * line per request: the access log).
 */
export function isoTime(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== isoSecond) {
    isoSecondText = new Date(second * 1000).toISOString().slice(0, -4);
    isoSecond = second;
  }
  const ms = now - second * 1000;
  return `,"time":"${isoSecondText}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
}

/** The pieces of pino's line that `logger` holds (pino.symbols), from which its lines are built here. */
interface LoggerParts {
  /** `{"level":30`, by level number (a level formatter would change it). */
  levelText: Record<number, string>;
  /** `,"time":"..."`: the logger's timestamp function. */
  time: () => string;
  /** The logger's bindings, as text (`,"service":"backoffice-api"`). */
  bindings: string;
  stream: DestinationStream & { [key: symbol]: unknown };
  /** pino's own line builder: what a fixed line is checked against. */
  asJson: (obj: object, msg: string, level: number, time: string) => string;
}

/**
 * Writes lines of one fixed shape to `logger`'s stream as pino writes them, without pino's
 * per-line work (a walk of the fields, a JSON.stringify of each object, its hooks): for the access
 * log, a line per request, whose fields are known and built as text by its writer, for less CPU
 * than pino's (bench/access-line.ts, docs/BENCHMARKS.md). `fields` is the fields' JSON text after
 * the bindings (`,"req":{...},...`), exactly what JSON.stringify makes of them. Made from the
 * logger's own parts, and checked against pino's line for a sample when made;
 * a logger whose lines it cannot build (redaction, serializers, a mixin, a message prefix, hooks,
 * a log formatter, a multistream, or any option that changes the sample's line, such as a message
 * key) gets pino's own writing instead.
 */
export function fixedShapeLines(logger: Logger): (level: number, fields: string, msg: string) => void {
  const build = (own: LoggerParts, level: number, fields: string, msg: string, time: string) => `${own.levelText[level]}${time}${own.bindings}${fields},"msg":${JSON.stringify(msg)}}\n`;
  const own = ownParts(logger, build);
  if (!own) {
    // The fields parsed back for pino: a second pass, for loggers the service's access log is not
    // (test/request-context.test.ts holds it to the path below).
    return (level, fields, msg) => {
      if (level >= logger.levelVal) logger[logger.levels.labels[level] as 'info'](JSON.parse(`{${fields.slice(1)}}`) as object, msg);
    };
  }
  return (level, fields, msg) => {
    if (level >= logger.levelVal) own.stream.write(build(own, level, fields, msg, own.time()));
  };
}

/** `logger`'s parts, when a line `build` makes of them is the line pino makes (checked on a sample at each level the access log uses); else none. */
function ownParts(logger: Logger, build: (own: LoggerParts, level: number, fields: string, msg: string, time: string) => string): LoggerParts | undefined {
  const parts = logger as unknown as Record<symbol, unknown>;
  try {
    const own: LoggerParts = {
      levelText: parts[pino.symbols.lsCacheSym] as LoggerParts['levelText'],
      time: parts[pino.symbols.timeSym] as LoggerParts['time'],
      bindings: parts[pino.symbols.chindingsSym] as string,
      stream: parts[pino.symbols.streamSym] as LoggerParts['stream'],
      asJson: (parts[pino.symbols.asJsonSym] as LoggerParts['asJson']).bind(logger),
    };
    // What pino does to a line around asJson (a mixin, a message prefix, a logMethod or
    // streamWrite hook) and a multistream, which must be told each line's level, are not done
    // here; nor what asJson does to keys the sample below has not (redaction, serializers but
    // pino's own for `err`, a log formatter). A logger with any of them writes through pino.
    // (msgPrefixSym is in pino.symbols since pino 8.14, not yet in its types.)
    const symbols = pino.symbols as typeof pino.symbols & { msgPrefixSym: symbol };
    const hooks = parts[symbols.hooksSym] as { logMethod?: unknown; streamWrite?: unknown } | undefined;
    const stringifiers = parts[symbols.stringifiersSym] as Record<string | symbol, unknown>;
    const serializers = parts[symbols.serializersSym] as Record<string, unknown>;
    const around = parts[symbols.mixinSym] || parts[symbols.msgPrefixSym] || hooks?.logMethod || hooks?.streamWrite || own.stream[symbols.needsMetadataGsym];
    const perKey = Object.keys(stringifiers).length > 0 || stringifiers[symbols.wildcardFirstSym] || Object.keys(serializers).some((key) => key !== 'err') || (parts[symbols.formattersSym] as { log?: unknown }).log;
    if (around || perKey) return undefined;
    if (typeof own.time !== 'function' || typeof own.bindings !== 'string') return undefined;
    const sample = { req: { id: 'a"\\', method: 'GET', path: '/\u00e9\u0000' }, res: { statusCode: 500 }, responseTime: 3 };
    const fields = `,${JSON.stringify(sample).slice(1, -1)}`;
    const same = [30, 50].every((level) => build(own, level, fields, 'request completed', ',"time":1') === own.asJson(sample, 'request completed', level, ',"time":1'));
    return same ? own : undefined;
  } catch {
    return undefined;
  }
}
