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

/** PIPE_BUF on Linux: a write(2) of at most this many bytes to a pipe is never interleaved with another process's. */
const ATOMIC_PIPE_WRITE = 4096;

/**
 * Standard output written in blocks rather than with a write(2) per line: the access log writes a
 * line per request, and its system call was the largest piece of what the service adds to a GET
 * over its floor (docs/BENCHMARKS.md, issue 34). Each write holds whole lines and at most
 * PIPE_BUF bytes, so that the processes of WORKERS > 1, which share one pipe, never cut into each
 * other's lines (only a single line longer than that could be, as before). A line waits at most
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
