// The sweep deletes what no longer serves: sign-in attempts past the throttle window, and sessions
// over for longer than the retention period, with their tokens. Live sessions keep every token
// generation (reuse detection needs them); security events stay.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser } from './support/sessions.js';
import { startServerProcess } from './support/server-process.js';
import { sweep } from '../src/maintenance/sweeper.js';
import { runCli } from './support/cli.js';
import { budget } from './support/budgets.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const DAY = 24 * 3600 * 1000;
const now = new Date('2026-11-21T12:00:00.000Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const policy = { throttleWindowS: 900, sessionIdleTimeoutS: 7 * 24 * 3600, sessionRetentionS: 30 * 24 * 3600 };

async function insertSession(userId: string, times: { created: Date; lastUsed: Date; expires: Date; ended?: Date; revoked?: Date }, generations = 2): Promise<string> {
  const { id } = await database.db
    .insertInto('sessions')
    .values({ user_id: userId, ip_address: '192.0.2.1', user_agent: 'test', created_at: times.created, last_used_at: times.lastUsed, expires_at: times.expires, ended_at: times.ended ?? null, revoked_at: times.revoked ?? null, generation: generations })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (let generation = 1; generation <= generations; generation++) {
    await database.db.insertInto('session_tokens').values({ session_id: id, generation, access_digest: randomBytes(32), refresh_digest: randomBytes(32), issued_at: times.created }).execute();
  }
  return id;
}

const insertAttempt = (at: Date) => database.db.insertInto('sign_in_failures').values({ email_digest: randomBytes(32), ip_address: '192.0.2.9', failed_at: at }).returning('id').executeTakeFirstOrThrow();

describe('sweep', () => {
  it('deletes attempts past the throttle window and sessions over for longer than the retention, keeping the rest', async () => {
    const user = await createUser(database.db);
    const month = { created: ago(60 * DAY), expires: ago(-DAY) };
    const kept = {
      live: await insertSession(user.id, { created: ago(DAY), lastUsed: ago(60_000), expires: ago(-29 * DAY) }, 5),
      revokedRecently: await insertSession(user.id, { ...month, lastUsed: ago(29 * DAY), revoked: ago(29 * DAY) }),
      idleNotLongEnough: await insertSession(user.id, { ...month, lastUsed: ago(36 * DAY) }), // idle since 29 days
    };
    const gone = {
      signedOut: await insertSession(user.id, { ...month, lastUsed: ago(31 * DAY), ended: ago(31 * DAY) }),
      revoked: await insertSession(user.id, { ...month, lastUsed: ago(40 * DAY), revoked: ago(31 * DAY) }),
      expired: await insertSession(user.id, { created: ago(61 * DAY), lastUsed: ago(32 * DAY), expires: ago(31 * DAY) }),
      idle: await insertSession(user.id, { ...month, lastUsed: ago(38 * DAY) }), // idle since 31 days
    };
    await database.db.insertInto('security_events').values({ type: 'sign_in_succeeded', occurred_at: ago(40 * DAY), user_id: user.id, session_id: gone.idle, ip_address: '192.0.2.1', user_agent: 'test' }).execute();
    const recentAttempt = await insertAttempt(ago(899_000));
    await insertAttempt(ago(900_000));
    await insertAttempt(ago(3 * DAY));

    expect(await sweep(database.db, now, policy)).toEqual({ signInAttempts: 2, signInChallenges: 0, sessions: 4, idempotencyAnswers: 0, oidcFlows: 0 });

    const sessionIds = (await database.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute()).map((r) => r.id);
    expect(sessionIds.sort()).toEqual(Object.values(kept).sort());
    const tokens = await database.db.selectFrom('session_tokens').select(['session_id', 'generation']).where('session_id', 'in', [...Object.values(kept), ...Object.values(gone)]).execute();
    expect(tokens.filter((t) => t.session_id === kept.live).map((t) => t.generation).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(tokens.filter((t) => Object.values(gone).includes(t.session_id))).toEqual([]);
    expect((await database.db.selectFrom('sign_in_failures').select('id').execute()).map((r) => String(r.id))).toContain(String(recentAttempt.id));
    expect(await database.db.selectFrom('security_events').select('id').where('session_id', '=', gone.idle).execute()).toHaveLength(1);
    expect(await sweep(database.db, now, policy)).toEqual({ signInAttempts: 0, signInChallenges: 0, sessions: 0, idempotencyAnswers: 0, oidcFlows: 0 });
  });

  it('runs on a timer in the server process, and on demand from the command line', { timeout: budget({ serverStart: 1, cliRun: 1 }) }, async () => {
    const old = await insertAttempt(new Date(Date.now() - 2 * 900_000));
    const server = await startServerProcess({ DATABASE_URL: database.url, SWEEP_INTERVAL_S: '1' });
    try {
      await expect.poll(async () => database.db.selectFrom('sign_in_failures').select('id').where('id', '=', old.id).executeTakeFirst(), { timeout: 15_000, interval: 250 }).toBeUndefined();
      // Logged once the whole maintenance step (sweep, then audit sealing and retention) is done.
      await expect.poll(() => server.output(), { timeout: 15_000, interval: 250 }).toContain('swept expired rows');
    } finally {
      expect(await server.stop()).toBe(0);
    }

    await insertAttempt(new Date(Date.now() - 2 * 900_000));
    const { stdout } = await runCli(['sweep'], { databaseUrl: database.url });
    expect(stdout).toMatch(/^Deleted 1 expired sign-in attempts, \d+ expired sign-in challenges, \d+ old sessions, \d+ expired idempotency answers and \d+ unfinished sign-ins at identity providers\.$/m);
  });
});
