// Everything kept under the sealing keys, moved to the one that comes first (src/auth/secrets/sealing-keys.ts):
// the second factors (src/auth/second-factors/reseal.ts), the signing secrets of webhook endpoints
// (src/webhooks/reseal.ts), identity providers' client secrets (src/auth/identity-providers/client-secret.ts) and
// the fingerprints of Idempotency-Key requests
// made before they were keyed. Run at every start of the service (cheap when there is nothing to
// move) and by `backoffice sealing-keys reseal` after a new key is put first. One transaction.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { keyedDigest, type Keyring } from '../auth/secrets/sealing-keys.js';
import { resealSecondFactors, type SecondFactorReseal } from '../auth/second-factors/reseal.js';
import { keyUnkeyedFingerprints } from '../idempotency/repository.js';
import { resealWebhookSecrets, type WebhookSecretReseal } from '../webhooks/reseal.js';
import { resealClientSecrets } from '../auth/identity-providers/client-secret.js';

export interface Reseal extends SecondFactorReseal, WebhookSecretReseal {
  /** Idempotency fingerprints made before they were keyed, keyed now (those under older keys expire within 24 h). */
  fingerprintsKeyed: number;
  /** Identity providers' client secrets sealed again under the current key, and those no configured key opens. */
  clientSecretsResealed: number;
  clientSecretsUnopenable: number;
}

export function resealAll(db: Kysely<Database>, keys: Keyring): Promise<Reseal> {
  return db.transaction().execute(async (trx) => {
    const secondFactors = await resealSecondFactors(trx, keys);
    const webhookSecrets = await resealWebhookSecrets(trx, keys);
    const key = keys.current.key('idempotency-fingerprint');
    const fingerprintsKeyed = await keyUnkeyedFingerprints(trx, keys.current.id, (digest) => keyedDigest(key, digest));
    const clientSecrets = await resealClientSecrets(trx, keys);
    return { ...secondFactors, ...webhookSecrets, fingerprintsKeyed, clientSecretsResealed: clientSecrets.resealed, clientSecretsUnopenable: clientSecrets.unopenable };
  });
}
