// The service behind a real PgBouncer (Debian's 1.18): with named prepared statements on (the
// default) in session mode, and with DB_PREPARED_STATEMENTS=false in transaction mode, where
// PgBouncer hands each transaction whichever server connection is free. And why the setting
// exists: in transaction mode, a statement prepared on one server connection is run on another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { captureLogs, createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { startPgBouncer, type PgBouncer } from './support/pgbouncer.js';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { makeApiKey } from './support/access-fixtures.js';
import { createUser, refresh, signIn } from './support/sessions.js';
import { findKeyBySecretDigest } from '../src/api-keys/repository.js';
import { digestSecret } from '../src/auth/secrets/secrets.js';
import { asAnotherClient } from './support/one-connection.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

/** The service's own pool (src/db/database.ts) through PgBouncer. */
function openThrough(bouncer: PgBouncer, options: { preparedStatements: boolean; poolMax: number }): Promise<DatabaseHandle> {
  const databaseName = new URL(database.url).pathname.slice(1);
  return openDatabase(
    { databaseUrl: bouncer.url(databaseName), dataDir: '', acquireTimeoutMs: 5000, statementTimeoutMs: 5000, ...options },
    captureLogs().logger,
  );
}

/** Many requests at once over every hot path: API key, sign-in, bearer, refresh, and a write in a transaction. */
async function exercise(through: DatabaseHandle) {
  const { app } = createTestApp(through.db);
  const server = app.listen(0);
  try {
    const key = await makeApiKey(database.db, ['users.list', 'users.create']);
    const user = await createUser(database.db, { permissions: ['users.list'] });
    const sets = await Promise.all(Array.from({ length: 4 }, () => signIn(server, user.email, user.password)));
    const statuses = await Promise.all([
      ...Array.from({ length: 40 }, () => request(server).get('/users?limit=5').set('x-api-key', key.secret).then((r) => r.status)),
      ...sets.flatMap((set) => Array.from({ length: 10 }, () => request(server).get('/users').set('authorization', `Bearer ${set.access_token}`).then((r) => r.status))),
      ...sets.map((set) => refresh(server, set).then((r) => r.status)),
      ...Array.from({ length: 5 }, (_, i) =>
        request(server)
          .post('/users')
          .set('x-api-key', key.secret)
          .send({ email: `bounced-${i}-${Date.now()}@example.com`, first_name: 'Bounced', last_name: 'Through' })
          .then((r) => r.status),
      ),
    ]);
    return statuses;
  } finally {
    server.close();
  }
}

describe('behind PgBouncer in session mode, prepared statements on (the default)', () => {
  let bouncer: PgBouncer;
  let through: DatabaseHandle;
  beforeAll(async () => {
    bouncer = await startPgBouncer(database.url, { mode: 'session', serverConnections: 20 });
    through = await openThrough(bouncer, { preparedStatements: true, poolMax: 10 });
  });
  afterAll(async () => {
    await through?.close();
    await bouncer?.stop();
  });

  it('answers every hot path, and the statements are prepared on the connections', async () => {
    const statuses = await exercise(through);
    expect(statuses.filter((s) => s >= 300)).toEqual([]);
    // A connection of the pool keeps its server connection in session mode: its named statements are there.
    const prepared = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(through.db);
    expect(prepared.rows[0]!.n).toBeGreaterThan(0);
  });
});

describe('behind PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer;
  beforeAll(async () => {
    // Fewer server connections than the service's pool: transactions move between them.
    bouncer = await startPgBouncer(database.url, { mode: 'transaction', serverConnections: 2 });
  });
  afterAll(() => bouncer?.stop());

  it('answers every hot path with DB_PREPARED_STATEMENTS=false', async () => {
    const through = await openThrough(bouncer, { preparedStatements: false, poolMax: 10 });
    try {
      const statuses = await exercise(through);
      expect(statuses.filter((s) => s >= 300)).toEqual([]);
    } finally {
      await through.close();
    }
  });

  it('fails with prepared statements on, once a statement prepared on one server connection runs on another', async () => {
    const key = await makeApiKey(database.db, ['users.list']);
    const digest = digestSecret(key.secret);
    const service = await openThrough(bouncer, { preparedStatements: true, poolMax: 1 });
    const other = await openThrough(bouncer, { preparedStatements: false, poolMax: 1 });
    try {
      // Prepared on the server connection PgBouncer lent for this statement...
      expect((await findKeyBySecretDigest(service.db, digest))?.id).toBe(key.id);
      // ...which another client now holds, in a transaction; the next statement goes to the other one.
      await other.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        const failure = await asAnotherClient(() => findKeyBySecretDigest(service.db, digest)).catch((err: unknown) => err as { code?: string; message: string });
        expect(failure).toMatchObject({ code: '26000' }); // invalid_sql_statement_name
        expect((failure as { message: string }).message).toMatch(/prepared statement "q[0-9a-f]+" does not exist/);
      });
    } finally {
      await service.close();
      await other.close();
    }
  });
});
