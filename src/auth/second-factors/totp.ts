// Authenticator apps (RFC 6238 TOTP: SHA-1, 6 digits, 30-second steps, one step either side for
// clock drift), through `otpauth`. The key is stored sealed (AES-256-GCM) under the service secret
// `second_factor_sealing`, bound to its owner (the user id is the additional data), so a sealed key
// copied onto another person's row does not open. It is shown once, at enrolment, and never logged.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

/** The name authenticator apps show above the code. */
export const TOTP_ISSUER = 'Back office';
const PERIOD_S = 30;
const DIGITS = 6;
const ALGORITHM = 'SHA1';
/** Steps accepted either side of now (RFC 6238 section 5.2 recommends at most one). */
const WINDOW = 1;
/** 160 bits, as RFC 4226 recommends for SHA-1. */
const KEY_BYTES = 20;

export interface NewTotpKey {
  key: Buffer;
  base32: string;
  uri: string;
}

export function newTotpKey(accountName: string): NewTotpKey {
  const secret = new Secret({ size: KEY_BYTES });
  const totp = new TOTP({ issuer: TOTP_ISSUER, label: accountName, algorithm: ALGORITHM, digits: DIGITS, period: PERIOD_S, secret });
  return { key: Buffer.from(secret.bytes), base32: secret.base32, uri: totp.toString() };
}

/**
 * The time step a code belongs to when it is good for `key` at `now` (within one step either
 * side), else null. The caller accepts a step only if it is later than the last one accepted: a
 * code is good once.
 */
export function totpStep(key: Buffer, code: string, now: Date): number | null {
  const timestamp = now.getTime();
  const delta = TOTP.validate({ token: code, secret: new Secret({ buffer: new Uint8Array(key).buffer }), algorithm: ALGORITHM, digits: DIGITS, period: PERIOD_S, timestamp, window: WINDOW });
  return delta === null ? null : TOTP.counter({ period: PERIOD_S, timestamp }) + delta;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
const aad = (userId: string) => Buffer.from(`totp:${userId}`);

/** iv | tag | ciphertext. */
export function sealTotpKey(sealingKey: Buffer, userId: string, key: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', sealingKey, iv).setAAD(aad(userId));
  const body = Buffer.concat([cipher.update(key), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

export function unsealTotpKey(sealingKey: Buffer, userId: string, sealed: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', sealingKey, sealed.subarray(0, IV_BYTES)).setAAD(aad(userId));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}
