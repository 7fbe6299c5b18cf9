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
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

/** How long a line may wait in standard output's buffer before it is written. */
export const STDOUT_FLUSH_MS = 100;

/**
 * Standard output written in blocks of up to 4 KiB rather than with a write(2) per line: the
 * access log writes a line per request, and its system call was the largest piece of what the
 * service adds to a GET over its floor (docs/BENCHMARKS.md, issue 34). A line waits at most
 * STDOUT_FLUSH_MS; what is buffered is written when the process exits, however it exits but by
 * SIGKILL or a crash of Node itself, which lose at most those 100 ms of lines.
 */
export function bufferedStdout(): DestinationStream {
  const stream = pino.destination({ dest: 1, sync: true, minLength: 4096 });
  const flush = () => {
    try {
      stream.flushSync();
    } catch {
      // Standard output closed (EPIPE): pino stops writing to it, nothing is left to flush.
    }
  };
  setInterval(flush, STDOUT_FLUSH_MS).unref();
  process.once('exit', flush);
  return stream;
}
