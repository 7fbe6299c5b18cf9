// A real SMTP server on loopback (smtp-server) whose deliveries the tests read back parsed
// (mailparser): the plain and HTML parts, the language, the headers. STARTTLS is offered with
// smtp-server's own self-signed certificate (the service is told `?tls_verify=off`); `secure`
// speaks TLS from the first byte (smtps://); `auth` requires a user and password; `refuse` makes
// the next messages fail with a temporary (451) or permanent (550) reply.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

export interface Delivered {
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  language: string | undefined;
  messageId: string | undefined;
  /** Whether the connection that carried it was encrypted (STARTTLS or TLS). */
  secure: boolean;
  parsed: ParsedMail;
}

export interface TestSmtpServer {
  url: string;
  delivered: Delivered[];
  /** Messages delivered to this address, oldest first. */
  to(address: string): Delivered[];
  /** Waits until `count` messages in all were delivered (or throws after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Delivered[]>;
  /** The next `n` messages are refused with this reply code (451: try later; 550: refused for good). */
  refuse(n: number, code: 451 | 550): void;
  close(): Promise<void>;
}

export async function startSmtpServer(options: { auth?: { user: string; password: string }; secure?: boolean } = {}): Promise<TestSmtpServer> {
  const delivered: Delivered[] = [];
  let refusals: { n: number; code: number } = { n: 0, code: 451 };
  const server = new SMTPServer({
    secure: options.secure ?? false,
    authOptional: !options.auth,
    disabledCommands: options.auth ? [] : ['AUTH'],
    // Plain-text AUTH on loopback is allowed without TLS only when no TLS is asked for.
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.password) return callback(null, { user: auth.username });
      callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (refusals.n > 0) {
          refusals.n -= 1;
          const err = Object.assign(new Error(refusals.code === 550 ? 'Mailbox unavailable' : 'Try again later'), { responseCode: refusals.code });
          return callback(err);
        }
        simpleParser(Buffer.concat(chunks))
          .then((parsed) => {
            delivered.push({
              to: session.envelope.rcptTo.map((r) => r.address),
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
              language: parsed.headers.get('content-language') as string | undefined,
              messageId: parsed.messageId,
              secure: session.secure,
              parsed,
            });
            callback();
          })
          .catch(callback);
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const credentials = options.auth ? `${encodeURIComponent(options.auth.user)}:${encodeURIComponent(options.auth.password)}@` : '';
  const url = `${options.secure ? 'smtps' : 'smtp'}://${credentials}127.0.0.1:${port}?tls_verify=off`;
  return {
    url,
    delivered,
    to: (address) => delivered.filter((d) => d.to.includes(address)),
    async waitFor(count, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (delivered.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} messages delivered, got ${delivered.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return delivered;
    },
    refuse(n, code) {
      refusals = { n, code };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
