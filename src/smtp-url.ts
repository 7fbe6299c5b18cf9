// SMTP_URL, read with the rest of the configuration: smtp://[user:password@]host[:port] (STARTTLS
// when the server offers it; `?starttls=required` refuses to go on without it) or
// smtps://[user:password@]host[:port] (TLS from the first byte, port 465 by default). A malformed
// one refuses to start (src/config.ts); the transport is src/mail/transport.ts.

export interface SmtpSettings {
  secure: boolean;
  host: string;
  port: number;
  user?: string;
  password?: string;
  requireTls: boolean;
  /** Tests only: accept the loopback server's self-signed certificate (`?tls_verify=off`). */
  verifyCertificate: boolean;
}

/** The settings of an SMTP_URL, or the reason it is refused (never echoing the password). */
export function parseSmtpUrl(value: string): SmtpSettings | string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'expected smtp://[user:password@]host[:port] or smtps://...';
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') return `expected the scheme smtp: or smtps:, not ${url.protocol}`;
  if (url.hostname === '') return 'expected a host name';
  if (url.pathname !== '' && url.pathname !== '/') return 'expected no path';
  const known = new Set(['starttls', 'tls_verify']);
  for (const key of url.searchParams.keys()) if (!known.has(key)) return `unknown parameter ${key} (starttls=required, tls_verify=off)`;
  const starttls = url.searchParams.get('starttls');
  if (starttls !== null && starttls !== 'required') return 'starttls: expected required';
  const verify = url.searchParams.get('tls_verify');
  if (verify !== null && verify !== 'off') return 'tls_verify: expected off';
  const secure = url.protocol === 'smtps:';
  let credentials: { user: string; password: string } | undefined;
  try {
    credentials = url.username !== '' ? { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) } : undefined;
  } catch {
    return 'expected the user and password percent-encoded (a % written %25)';
  }
  return {
    secure,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? (secure ? 465 : 587) : Number(url.port),
    ...credentials,
    requireTls: starttls === 'required',
    verifyCertificate: verify !== 'off',
  };
}

