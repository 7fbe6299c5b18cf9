// The SMTP client (nodemailer), configured by SMTP_URL (src/smtp-url.ts: checked when the
// configuration is read, a malformed one refuses to start). The server is not reached at start: an
// unreachable server only delays messages (src/mail/sender.ts). Pooled connections, each step
// bounded by MAIL_TIMEOUT_MS.
import nodemailer from 'nodemailer';
import type { SmtpSettings } from '../smtp-url.js';

/** One message as the sender hands it to the transport. */
export interface Envelope {
  id: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  language: string;
}

export interface MailTransport {
  send(message: Envelope): Promise<void>;
  close(): void;
}

export function smtpTransport(settings: SmtpSettings, timeoutMs: number): MailTransport {
  const transporter = nodemailer.createTransport({
    host: settings.host,
    port: settings.port,
    secure: settings.secure,
    requireTLS: settings.requireTls,
    ...(settings.user !== undefined ? { auth: { user: settings.user, pass: settings.password ?? '' } } : {}),
    tls: { rejectUnauthorized: settings.verifyCertificate },
    pool: true,
    maxConnections: 4,
    maxMessages: 500,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    logger: false,
  });
  return {
    async send(m) {
      await transporter.sendMail({
        from: m.from,
        to: m.to,
        subject: m.subject,
        text: m.text,
        ...(m.html !== null ? { html: m.html } : {}),
        // The message's id: a message sent again after a lost answer carries the same one, which
        // receivers and the tests can tell.
        messageId: `<${m.id}@backoffice>`,
        headers: { 'Content-Language': m.language, 'Auto-Submitted': 'auto-generated' },
      });
    },
    close() {
      transporter.close();
    },
  };
}
