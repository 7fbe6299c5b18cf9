// The login token set: an access token (10 minutes) and a single-use refresh token, both opaque
// secrets (src/auth/secrets/secrets.ts) of which only SHA-256 digests are stored.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { digestSecret, generateSecret, isWellFormedSecret } from '../secrets/secrets.js';

export const ACCESS_TOKEN_PREFIX = 'boa';
export const REFRESH_TOKEN_PREFIX = 'bor';
/** Fixed by the interface: `expires_in` is always 600. */
export const ACCESS_TOKEN_TTL_S = 600;

export interface TokenSet {
  token_type: 'Bearer';
  expires_in: 600;
  access_token: string;
  refresh_token: string;
}

export function newTokenSet(): TokenSet {
  return {
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_S,
    access_token: generateSecret(ACCESS_TOKEN_PREFIX),
    refresh_token: generateSecret(REFRESH_TOKEN_PREFIX),
  };
}

export const isAccessToken = (value: string) => isWellFormedSecret(ACCESS_TOKEN_PREFIX, value);
export const isRefreshToken = (value: string) => isWellFormedSecret(REFRESH_TOKEN_PREFIX, value);
export { digestSecret as digestToken };

// The set a refresh token was exchanged for is kept sealed (AES-256-GCM) under a key derived from
// that refresh token, which the database never holds: only a caller presenting the very same
// refresh token inside the grace window can open it.
const sealingKey = (refreshToken: string) => createHmac('sha256', refreshToken).update('backoffice successor token set v1').digest();

export function sealTokenSet(set: TokenSet, refreshToken: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(refreshToken), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify([set.access_token, set.refresh_token]), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

export function unsealTokenSet(sealed: Buffer, refreshToken: string): TokenSet {
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(refreshToken), sealed.subarray(0, 12));
  decipher.setAuthTag(sealed.subarray(12, 28));
  const plain = Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
  const [access_token, refresh_token] = JSON.parse(plain) as [string, string];
  return { token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_S, access_token, refresh_token };
}
