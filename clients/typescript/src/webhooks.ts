// Receiving webhooks: Standard Webhooks signatures (docs/EVENTS.md, "Signature"). The receiver
// hands over the body exactly as received (bytes or text, never re-serialized JSON), the headers,
// and its secret(s); it gets the event typed by the contract's `webhooks` section, or an error.
// WebCrypto only: Node 20+, browsers, workers.
import type { Style, WebhookEvent } from './styles.js';

export type HeadersLike = Headers | Record<string, string | readonly string[] | undefined>;

export interface VerifyOptions {
  /** The endpoint's `whsec_...` secret; during a rotation's grace period, give both (the new first). */
  secret: string | readonly string[];
  /** How far `webhook-timestamp` may be from now, either way (default 300 s): an old message replayed is refused. */
  toleranceSeconds?: number;
  /** For tests: the time now, in ms since the epoch. */
  now?: number;
}

export type WebhookFailure = 'missing_headers' | 'invalid_timestamp' | 'timestamp_too_old' | 'timestamp_in_future' | 'invalid_secret' | 'no_matching_signature' | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  constructor(readonly reason: WebhookFailure, message: string) {
    super(message);
  }
}

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() === name) return typeof value === 'string' ? value : value?.join(' ');
  }
  return undefined;
}

const encoder = new TextEncoder();

function bytesOf(body: string | Uint8Array | ArrayBuffer): Uint8Array {
  return typeof body === 'string' ? encoder.encode(body) : body instanceof Uint8Array ? body : new Uint8Array(body);
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  try {
    return Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
  } catch {
    throw new WebhookVerificationError('invalid_secret', 'the secret is not a whsec_ base64 secret');
  }
}

/** The `v1,` signature of a message: base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed by the secret's bytes. */
export async function sign(secret: string, id: string, timestamp: number | string, body: string | Uint8Array | ArrayBuffer): Promise<string> {
  const key = await globalThis.crypto.subtle.importKey('raw', secretBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const payload = bytesOf(body);
  const message = new Uint8Array(prefix.length + payload.length);
  message.set(prefix);
  message.set(payload, prefix.length);
  return `v1,${base64(new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, message)))}`;
}

/** Headers for a message signed as the service signs it: to test a receiver without the service. */
export async function signedHeaders(secret: string, id: string, body: string | Uint8Array, timestamp = Math.floor(Date.now() / 1000)): Promise<Record<string, string>> {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': await sign(secret, id, timestamp, body) };
}

function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/**
 * Checks a delivery's signature and age and answers its event, typed by the contract (in the key
 * style the endpoint was made with, `key_style`; snake by default). Throws WebhookVerificationError
 * otherwise: answer it 400 and do nothing. Deduplicate by the event's `id` (= `webhook-id`): a
 * delivery may come more than once.
 */
export async function verifyWebhook<S extends Style = 'snake'>(body: string | Uint8Array | ArrayBuffer, headers: HeadersLike, options: VerifyOptions): Promise<WebhookEvent<S>> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing_headers', 'webhook-id, webhook-timestamp and webhook-signature are required');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not a number of seconds');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (Number(timestamp) < now - tolerance) throw new WebhookVerificationError('timestamp_too_old', 'the message is older than the tolerance');
  if (Number(timestamp) > now + tolerance) throw new WebhookVerificationError('timestamp_in_future', 'the message is dated in the future beyond the tolerance');
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  const offered = signatures.split(' ').filter((s) => s.startsWith('v1,'));
  let matched = false;
  for (const secret of secrets) {
    const expected = await sign(secret, id, timestamp, body);
    // Every comparison runs (no early exit on the first match): the time says nothing of which matched.
    for (const signature of offered) if (sameText(signature, expected)) matched = true;
  }
  if (!matched) throw new WebhookVerificationError('no_matching_signature', 'no signature matches the secret');
  try {
    return JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(bytesOf(body))) as WebhookEvent<S>;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'the body is not JSON');
  }
}
