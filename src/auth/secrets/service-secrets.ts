// Secrets the service keeps for itself in the database (table service_secrets, created at first
// start by a migration): every process reads the same one, so what one process signs another
// verifies. Each process keeps a secret for a minute: a rotation reaches every process within a
// minute, without a query per request.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, ServiceSecretsTable } from '../../db/schema.js';
import type { Clock } from '../../clock.js';

export type ServiceSecretName = ServiceSecretsTable['name'];

const KEEP_MS = 60_000;

/**
 * Reads a secret, kept in this process for a minute. Inside a transaction, pass it (`on`): the read
 * then takes no second connection while the transaction holds one (the embedded database has one).
 */
export function serviceSecret(db: Kysely<Database>, clock: Clock, name: ServiceSecretName): (on?: Kysely<Database>) => Promise<Buffer> {
  let kept: { secret: Promise<Buffer>; until: number } | undefined;
  return (on = db) => {
    const now = clock.now().getTime();
    if (!kept || kept.until <= now) {
      const secret = on.selectFrom('service_secrets').select('secret').where('name', '=', name).executeTakeFirstOrThrow().then((row) => row.secret);
      kept = { secret, until: now + KEEP_MS };
      // A failed read (database down) is not kept: the next request tries again.
      secret.catch(() => (kept = undefined));
    }
    return kept.secret;
  };
}

/** Replaces a secret with a new random one; what the old one signed stops being accepted. */
export async function rotateServiceSecret(db: Kysely<Database>, name: ServiceSecretName, now: Date): Promise<void> {
  await db
    .insertInto('service_secrets')
    .values({ name, secret: randomBytes(32), created_at: now })
    .onConflict((oc) => oc.column('name').doUpdateSet({ secret: (eb) => eb.ref('excluded.secret'), created_at: (eb) => eb.ref('excluded.created_at') }))
    .execute();
}
