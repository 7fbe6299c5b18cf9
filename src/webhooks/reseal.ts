// Moving webhook signing secrets to the sealing key that comes first (src/auth/secrets/sealing-keys.ts): at
// every start of the service and by `backoffice sealing-keys reseal`, in the transaction of
// src/maintenance/reseal.ts. A secret (or the previous one, during a rotation's grace period)
// sealed under an older configured key, or under the service secret the database kept before
// (`webhook_sealing`, key id null), is opened and sealed again. A secret whose key is not
// configured stays as it is and is counted: its deliveries fail (`sealing_key_missing`) until the
// key is put back. Once no secret needs the database's old one, it is deleted. Rows are locked:
// two processes starting at once re-seal once.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Keyring } from '../auth/secrets/sealing-keys.js';
import { sealSecret, unsealSecret } from './secrets.js';

export interface WebhookSecretReseal {
  /** Signing secrets (current or previous) sealed again under the current key. */
  webhookSecretsResealed: number;
  /** Signing secrets whose key is not configured: their endpoint cannot sign until it is (or the secret is rotated). */
  webhookSecretsUnopenable: number;
  /** The old secret `webhook_sealing` was in the database, and is deleted now. */
  webhookDatabaseSecretDeleted: boolean;
}

export async function resealWebhookSecrets(trx: Kysely<Database>, keys: Keyring): Promise<WebhookSecretReseal> {
  const current = keys.current.id;
  const legacy = await trx.selectFrom('service_secrets').select('secret').where('name', '=', 'webhook_sealing').executeTakeFirst();
  const rows = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'secret_sealed', 'secret_key_id', 'previous_secret_sealed', 'previous_secret_key_id'])
    .where((eb) =>
      eb.or([
        eb('secret_key_id', 'is', null),
        eb('secret_key_id', '<>', current),
        eb.and([eb('previous_secret_sealed', 'is not', null), eb.or([eb('previous_secret_key_id', 'is', null), eb('previous_secret_key_id', '<>', current)])]),
      ]),
    )
    .forUpdate()
    .execute();
  const target = keys.current.key('webhook-secret-seal');
  let resealed = 0;
  let unopenable = 0;
  /** The value sealed again under the current key, or null when its key is not there. */
  const move = (endpointId: string, sealed: Buffer, keyId: string | null): Buffer | null => {
    if (keyId === current) return sealed;
    const key = keyId === null ? legacy?.secret : keys.byId(keyId, 'webhook-secret-seal');
    if (!key) {
      unopenable += 1;
      return null;
    }
    resealed += 1;
    return sealSecret(target, endpointId, unsealSecret(key, endpointId, sealed));
  };
  for (const row of rows) {
    const secret = move(row.id, row.secret_sealed, row.secret_key_id);
    const previous = row.previous_secret_sealed === null ? null : move(row.id, row.previous_secret_sealed, row.previous_secret_key_id);
    if (secret === null && previous === null) continue;
    await trx
      .updateTable('webhook_endpoints')
      .set({
        ...(secret !== null ? { secret_sealed: secret, secret_key_id: current } : {}),
        ...(previous !== null ? { previous_secret_sealed: previous, previous_secret_key_id: current } : {}),
      })
      .where('id', '=', row.id)
      .execute();
  }
  // Every value it sealed is sealed again above: nothing needs it any more.
  if (legacy) await trx.deleteFrom('service_secrets').where('name', '=', 'webhook_sealing').execute();
  return { webhookSecretsResealed: resealed, webhookSecretsUnopenable: unopenable, webhookDatabaseSecretDeleted: legacy !== undefined };
}
