// Moving second factors to the sealing key that comes first (src/auth/secrets/sealing-keys.ts): at every
// start of the service and by `backoffice sealing-keys reseal`. A TOTP key sealed under an older
// configured key, or under the service secret the database kept before (id null), is opened and
// sealed again; a recovery-code digest made before keys (a bare SHA-256, id null) is keyed. A
// digest keyed under an older key cannot be moved (the code is not known): it keeps its key id
// and is counted, and goes when its owner makes new codes. Once no value needs the database's old
// secret, it is deleted. One transaction, rows locked: two processes starting at once re-seal once.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Keyring } from '../secrets/sealing-keys.js';
import { sealTotpKey, unsealTotpKey } from './totp.js';
import { keyRecoveryDigest } from './recovery-codes.js';

export interface SecondFactorReseal {
  /** TOTP keys sealed again under the current key. */
  totpResealed: number;
  /** TOTP keys whose key is not configured: they cannot be opened until it is (or the person is reset). */
  totpUnopenable: number;
  /** Unkeyed recovery-code digests keyed under the current key. */
  recoveryCodesKeyed: number;
  /** Recovery codes keyed under an older key, by key id: that key must stay configured while they do. */
  recoveryCodesUnderOlderKeys: Record<string, number>;
  /** The old secret was in the database, and is deleted now. */
  databaseSecretDeleted: boolean;
}

export async function resealSecondFactors(trx: Kysely<Database>, keys: Keyring): Promise<SecondFactorReseal> {
  const current = keys.current.id;
  const legacy = await trx.selectFrom('service_secrets').select('secret').where('name', '=', 'second_factor_sealing').executeTakeFirst();
  const rows = await trx
    .selectFrom('second_factors')
    .select(['id', 'user_id', 'totp_secret_sealed', 'totp_key_id'])
    .where('kind', '=', 'totp')
    .where((eb) => eb.or([eb('totp_key_id', 'is', null), eb('totp_key_id', '<>', current)]))
    .forUpdate()
    .execute();
  let totpResealed = 0;
  let totpUnopenable = 0;
  for (const row of rows) {
    const key = row.totp_key_id === null ? legacy?.secret : keys.byId(row.totp_key_id, 'totp-seal');
    if (!key) {
      totpUnopenable += 1;
      continue;
    }
    const sealed = sealTotpKey(keys.current.key('totp-seal'), row.user_id, unsealTotpKey(key, row.user_id, row.totp_secret_sealed!));
    await trx.updateTable('second_factors').set({ totp_secret_sealed: sealed, totp_key_id: current }).where('id', '=', row.id).execute();
    totpResealed += 1;
  }
  const unkeyed = await trx.selectFrom('recovery_codes').select(['user_id', 'digest']).where('key_id', 'is', null).forUpdate().execute();
  const recoveryKey = keys.current.key('recovery-code');
  for (const code of unkeyed) {
    await trx
      .updateTable('recovery_codes')
      .set({ digest: keyRecoveryDigest(recoveryKey, code.digest), key_id: current })
      .where('user_id', '=', code.user_id)
      .where('digest', '=', code.digest)
      .execute();
  }
  const older = await trx
    .selectFrom('recovery_codes')
    .select(['key_id', (eb) => eb.fn.countAll<string>().as('n')])
    .where('key_id', '<>', current)
    .groupBy('key_id')
    .execute();
  // Every value it sealed is sealed again above: nothing needs it any more.
  if (legacy) await trx.deleteFrom('service_secrets').where('name', '=', 'second_factor_sealing').execute();
  return {
    totpResealed,
    totpUnopenable,
    recoveryCodesKeyed: unkeyed.length,
    recoveryCodesUnderOlderKeys: Object.fromEntries(older.map((o) => [o.key_id!, Number(o.n)])),
    databaseSecretDeleted: legacy !== undefined,
  };
}
