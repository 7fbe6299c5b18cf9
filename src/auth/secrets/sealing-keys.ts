// The sealing keys: the secret that seals TOTP keys, webhook signing secrets and identity providers'
// client secrets (AES-256-GCM) and keys the digests the
// database keeps of recovery codes, of Idempotency-Key requests and of the devices people signed in
// from (HMAC-SHA-256). It comes from
// configuration (SEALING_KEYS or SEALING_KEYS_FILE, src/config.ts), never from the database: a
// dump or a backup alone opens nothing. Each value stores the id of the key it was made under, so
// a new key can come first and the old ones stay to open what they made until `backoffice
// sealing-keys reseal` has moved it (docs/DEPLOYMENT.md, "The sealing keys"). The embedded
// database of `make run` keeps its own key, made once, in DATA_DIR/sealing-keys (mode 0600).
// Each use gets its own key derived with HKDF, so no two uses ever share a key.
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseSealingKeys, type Config, type SealingKey } from '../../config.js';

export const EMBEDDED_SEALING_KEYS_FILE = 'sealing-keys';

export type SealingPurpose = 'totp-seal' | 'webhook-secret-seal' | 'recovery-code' | 'idempotency-fingerprint' | 'identity-provider-secret' | 'known-device';

export interface Keyring {
  /** The key that seals and digests now. */
  current: { id: string; key: (purpose: SealingPurpose) => Buffer };
  /** The key of this id, for `purpose`; undefined when it is not configured (any more). */
  byId(id: string, purpose: SealingPurpose): Buffer | undefined;
  ids: string[];
}

export function keyring(keys: SealingKey[]): Keyring {
  const derived = new Map<string, Buffer>();
  const derive = (k: SealingKey, purpose: SealingPurpose) => {
    const name = `${k.id}\n${purpose}`;
    let key = derived.get(name);
    if (!key) derived.set(name, (key = Buffer.from(hkdfSync('sha256', k.key, Buffer.alloc(0), `backoffice ${purpose}`, 32))));
    return key;
  };
  const first = keys[0]!;
  return {
    current: { id: first.id, key: (purpose) => derive(first, purpose) },
    byId(id, purpose) {
      const k = keys.find((candidate) => candidate.id === id);
      return k && derive(k, purpose);
    },
    ids: keys.map((k) => k.id),
  };
}

/** HMAC-SHA-256 of `data` under the key for `purpose`. */
export function keyedDigest(key: Buffer, data: Buffer | string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** A new key line for SEALING_KEYS: `<id>:<32 random bytes, base64>`. */
export function newSealingKeyLine(id: string): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

/**
 * The embedded database's key (no SEALING_KEYS configured, no DATABASE_URL): made once in the data
 * directory, readable by its owner only, and read from there at every start.
 */
export function embeddedSealingKeys(dataDir: string): SealingKey[] {
  const file = resolve(join(dataDir, EMBEDDED_SEALING_KEYS_FILE));
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(file, `# The sealing keys of this embedded database (docs/DEPLOYMENT.md). Keep this file with the data, apart from backups of it.\n${newSealingKeyLine('embedded-1')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return parseSealingKeys(readFileSync(file, 'utf8'), file);
}

/** The configuration with its sealing keys resolved (the embedded database's own when none are configured). */
export function withSealingKeys(config: Config): Config & { sealingKeys: SealingKey[] } {
  return { ...config, sealingKeys: config.sealingKeys ?? embeddedSealingKeys(config.dataDir) };
}

/** The keyring of a resolved configuration. */
export function keyringOf(config: Config): Keyring {
  if (!config.sealingKeys) throw new Error('the sealing keys are not resolved (withSealingKeys)');
  return keyring(config.sealingKeys);
}
