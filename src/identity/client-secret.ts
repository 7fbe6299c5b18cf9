// An identity provider's client secret at rest: AES-256-GCM under the service secret
// `identity_provider_sealing` (migration 20261223T1000; the existing sealing mechanism, as for
// TOTP keys: the sealing key kept outside the database is not on main yet), the provider's id as
// the additional data, so a sealed secret copied onto another provider's row does not open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const aad = (providerId: string) => Buffer.from(`identity_provider:${providerId}`);

/** iv | tag | ciphertext. */
export function sealClientSecret(sealingKey: Buffer, providerId: string, secret: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', sealingKey, iv).setAAD(aad(providerId));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

export function unsealClientSecret(sealingKey: Buffer, providerId: string, sealed: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', sealingKey, sealed.subarray(0, IV_BYTES)).setAAD(aad(providerId));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
