// API key secrets: `bok_<43 base62 chars>_<6 char checksum>` (see src/auth/secrets/secrets.ts), and the
// parts of one that may be shown later to recognise the key.
import { digestSecret, generateSecret, isWellFormedSecret, secretPattern } from '../auth/secrets/secrets.js';

export const API_KEY_PREFIX = 'bok';

export function newApiKeySecret() {
  const secret = generateSecret(API_KEY_PREFIX);
  return {
    secret,
    digest: digestSecret(secret),
    // 4 of the 256 random bits' characters on each side: enough to tell keys apart, useless to guess.
    display_prefix: secret.slice(0, API_KEY_PREFIX.length + 5),
    last_characters: secret.slice(-4),
  };
}

export const isWellFormedApiKey = (value: string) => isWellFormedSecret(API_KEY_PREFIX, value);

/** What a secret-scanning partner matches API keys with (registered with the partner, published in the contract). */
export const API_KEY_PATTERN = secretPattern(API_KEY_PREFIX);

/** The secret type's name in leaked-key reports. */
export const API_KEY_SECRET_TYPE = 'backoffice_api_key';
