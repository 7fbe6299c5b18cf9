// Fixed statements send Date parameters as binary timestamptz (src/db/fixed-statement.ts), which
// PostgreSQL reads without parsing text: the instant must arrive exactly, on the pool and in a
// transaction, with or without named prepared statements.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { fixedStatement } from '../src/db/fixed-statement.js';
import request from 'supertest';
import { createTestApp } from './support/context.js';
import { createUser } from './support/sessions.js';
import { signIn } from './support/sessions.js';
import { ManualClock } from '../src/clock.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const echo = fixedStatement(
  (_db, p: { at: Date; after: Date }) =>
    sql<{ text: string; epoch_ms: string; later: boolean }>`
      select to_char(${p.at}::timestamptz at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as text,
        (extract(epoch from ${p.at}::timestamptz) * 1000)::bigint::text as epoch_ms, ${p.at}::timestamptz > ${p.after}::timestamptz as later`,
);

const instants = ['2026-06-01T10:00:00.000Z', '2026-06-01T10:00:00.001Z', '1999-12-31T23:59:59.999Z', '1970-01-01T00:00:00.000Z', '2000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'];

describe('Date parameters of fixed statements', () => {
  it('arrive as the same instant to the millisecond, before and after 2000, on the pool and in a transaction', async () => {
    for (const iso of instants) {
      const at = new Date(iso);
      const after = new Date(at.getTime() - 1);
      const expected = { text: `${iso.slice(0, 23)}000`, epoch_ms: String(at.getTime()), later: true };
      expect(await echo.execute(database.db, { at, after }), iso).toEqual([expected]);
      const inTransaction = await database.db.transaction().execute((trx) => echo.execute(trx, { at, after }));
      expect(inTransaction, iso).toEqual([expected]);
    }
  });

  it('whatever the session time zone', async () => {
    const at = new Date('2026-03-29T01:30:00.250Z'); // a daylight-saving change in Europe
    const rows = await database.db.connection().execute(async (conn) => {
      await sql`set time zone 'Europe/Paris'`.execute(conn);
      return echo.execute(conn, { at, after: at });
    });
    expect(rows).toEqual([{ text: '2026-03-29T01:30:00.250000', epoch_ms: String(at.getTime()), later: false }]);
  });
});

describe('security: binary timestamps of fixed statements', () => {
  it('a sign-in records the clock’s instant, to the millisecond, in the session, its token and the sign-in event', async () => {
    const instant = new Date('2031-03-30T01:30:00.123Z'); // a DST change in Europe, for a local-time mistake to show
    const clock = new ManualClock(instant);
    const { app } = createTestApp(database.db, { clock });
    const user = await createUser(database.db);
    await request(app).post('/sessions').send({ session: { email: user.email, password: 'wrong password here' } }).expect(401);
    await signIn(app, user.email, user.password);
    const row = await sql<{ created_at: Date; expires_at: Date; issued_at: Date; occurred_at: Date }>`
      select s.created_at, s.expires_at, t.issued_at, e.occurred_at from sessions s
      join session_tokens t on t.session_id = s.id
      join security_events e on e.session_id = s.id and e.type = 'sign_in_succeeded'
      where s.user_id = ${user.id}`.execute(database.db);
    const r = row.rows[0]!;
    expect(r.created_at.toISOString()).toBe(instant.toISOString());
    expect(r.issued_at.toISOString()).toBe(instant.toISOString());
    expect(r.occurred_at.toISOString()).toBe(instant.toISOString());
    expect(r.expires_at.getTime()).toBeGreaterThan(instant.getTime());
  });
});
