// Signing secrets of webhook endpoints and the Standard Webhooks signature
// (https://www.standardwebhooks.com: `v1,` base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed by
// the bytes of the `whsec_` secret). A receiver must hold the secret itself, so it cannot be kept as
// a digest: it is sealed (AES-256-GCM) under the configured sealing keys (src/auth/secrets/sealing-keys.ts,
// never in the database: a dump alone opens no secret and forges no event), with the endpoint's
// id as additional data, so a sealed secret moved to another row does not open. Each sealed
// secret keeps the id of its key (`secret_key_id`), so a new key can come first and
// `backoffice sealing-keys reseal` move them (src/webhooks/reseal.ts).
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Keyring } from '../auth/secrets/sealing-keys.js';

const PREFIX = 'whsec_';
const SECRET_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A new secret as shown once: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

const aad = (endpointId: string) => Buffer.from(`webhook:${endpointId}`);

/** iv | tag | ciphertext of the secret's text. */
export function sealSecret(sealingKey: Buffer, endpointId: string, secret: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', sealingKey, iv).setAAD(aad(endpointId));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

export function unsealSecret(sealingKey: Buffer, endpointId: string, sealed: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', sealingKey, sealed.subarray(0, IV_BYTES)).setAAD(aad(endpointId));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}

/** A secret sealed under the current key, with that key's id. */
export function sealUnderCurrent(keys: Keyring, endpointId: string, secret: string): { sealed: Buffer; keyId: string } {
  return { sealed: sealSecret(keys.current.key('webhook-secret-seal'), endpointId, secret), keyId: keys.current.id };
}

/** A secret opened with the key it was sealed under; null when that key is not configured (or is the old database secret, `keyId` null). */
export function openSealed(keys: Keyring, endpointId: string, sealed: Buffer, keyId: string | null): string | null {
  const key = keyId === null ? undefined : keys.byId(keyId, 'webhook-secret-seal');
  return key ? unsealSecret(key, endpointId, sealed) : null;
}

/** One `v1,` signature of a message by one secret. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` header: one signature per secret in force (two during a rotation's grace period). */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => sign(secret, id, timestamp, body)).join(' ');
}
