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
