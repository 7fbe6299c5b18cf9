// An identity provider's client secret at rest: AES-256-GCM under the sealing keys (SEALING_KEYS,
// src/auth/secrets/sealing-keys.ts: from configuration, never from the database, as the TOTP keys are),
// the HKDF subkey of the purpose `identity-provider-secret`, the key id stored beside it
// (`client_secret_key_id`), the provider's id as the additional data, so a sealed secret copied
// onto another provider's row does not open. Re-sealed under the first key at start and by
// `backoffice sealing-keys reseal` (resealClientSecrets below).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Keyring } from '../secrets/sealing-keys.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const PURPOSE = 'identity-provider-secret';
const aad = (providerId: string) => Buffer.from(`identity_provider:${providerId}`);

/** iv | tag | ciphertext, under the current key; its id is stored beside. */
export function sealClientSecret(keys: Keyring, providerId: string, secret: string): { client_secret_sealed: Buffer; client_secret_key_id: string } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keys.current.key(PURPOSE), iv).setAAD(aad(providerId));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return { client_secret_sealed: Buffer.concat([iv, cipher.getAuthTag(), body]), client_secret_key_id: keys.current.id };
}

/** The secret, opened with the key it was sealed under; throws when that key is not configured. */
export function openClientSecret(keys: Keyring, provider: { id: string; client_secret_sealed: Buffer; client_secret_key_id: string }): string {
  const key = keys.byId(provider.client_secret_key_id, PURPOSE);
  if (!key) throw new Error(`the sealing key ${provider.client_secret_key_id} of identity provider ${provider.id} is not configured`);
  const sealed = provider.client_secret_sealed;
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES)).setAAD(aad(provider.id));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}

/** Seals again under the current key every secret sealed under an older configured one; counts those no configured key opens. */
export async function resealClientSecrets(trx: Kysely<Database>, keys: Keyring): Promise<{ resealed: number; unopenable: number }> {
  const rows = await trx
    .selectFrom('identity_providers')
    .select(['id', 'client_secret_sealed', 'client_secret_key_id'])
    .where('client_secret_key_id', '<>', keys.current.id)
    .forUpdate()
    .execute();
  let resealed = 0;
  for (const row of rows) {
    if (!keys.byId(row.client_secret_key_id, PURPOSE)) continue;
    await trx.updateTable('identity_providers').set(sealClientSecret(keys, row.id, openClientSecret(keys, row))).where('id', '=', row.id).execute();
    resealed += 1;
  }
  return { resealed, unopenable: rows.length - resealed };
}
