// The sweep deletes what no longer serves: sign-in attempts past the throttle window, and sessions
// over for longer than the retention period, with their tokens. Live sessions keep every token
// generation (reuse detection needs them); security events stay. The maintenance step also applies
// the configured retention of events, webhook deliveries and messages.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testConfig, type TestDatabase } from './support/context.js';
import { makeWebhookEndpoint } from './support/access-fixtures.js';
import { createUser } from './support/sessions.js';
import { startServerProcess } from './support/server-process.js';
import { DEFAULT_RETENTION, maintain, sweep } from '../src/maintenance/sweeper.js';
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

describe('retention by configuration: events, webhook deliveries, messages', () => {
  const retention = { eventRetentionS: 10 * 24 * 3600, deliveryRetentionS: 5 * 24 * 3600, messageRetentionS: 3 * 24 * 3600 };
  const day = (n: number) => ago(n * DAY);

  async function event(at: Date) {
    const { id } = await database.db
      .insertInto('events')
      .values({ type: 'task.created', occurred_at: at, audit_event_id: null, required_permission: 'tasks.read', payload: JSON.stringify({ type: 'task.created' }) })
      .returning('id')
      .executeTakeFirstOrThrow();
    return id;
  }
  async function delivery(endpointId: string, eventId: string, at: Date, status: 'pending' | 'succeeded' | 'failed') {
    const { id } = await database.db.insertInto('webhook_deliveries').values({ endpoint_id: endpointId, event_id: eventId, created_at: at }).returning('id').executeTakeFirstOrThrow();
    await database.db.updateTable('webhook_deliveries').set({ status }).where('id', '=', id).execute();
    return id;
  }
  const message = async (at: Date, sent: boolean) =>
    (await database.db.insertInto('messages').values({ recipient: 'someone@example.com', kind: 'invitation', language: 'en', subject: 's', body: 'b', created_at: at, sent_at: sent ? at : null }).returning('id').executeTakeFirstOrThrow()).id;

  it('rows older than their retention go, younger ones stay, a delivery still being retried stays', async () => {
    const endpoint = await makeWebhookEndpoint(database.db);
    const oldEvent = await event(day(11));
    const youngEvent = await event(day(9));
    const deliveries = {
      withOldEvent: await delivery(endpoint.id, oldEvent, day(11), 'succeeded'),
      finishedOld: await delivery(endpoint.id, youngEvent, day(6), 'failed'),
      finishedYoung: await delivery(endpoint.id, youngEvent, day(4), 'succeeded'),
      stillRetried: await delivery(endpoint.id, youngEvent, day(6), 'pending'),
    };
    const messages = { sentOld: await message(day(4), true), unsentOld: await message(day(4), false), young: await message(day(2), true) };

    const done = await maintain(database.db, now, policy, 400 * 24 * 3600, retention);
    expect(done).toMatchObject({ events: 1, webhookDeliveries: 1, messages: 2 });

    const events = await database.db.selectFrom('events').select('id').where('id', 'in', [oldEvent, youngEvent]).execute();
    expect(events.map((e) => e.id)).toEqual([youngEvent]);
    const left = await database.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', endpoint.id).execute();
    expect(left.map((d) => d.id).sort()).toEqual([deliveries.finishedYoung, deliveries.stillRetried].sort());
    const kept = await database.db.selectFrom('messages').select('id').where('id', 'in', Object.values(messages)).execute();
    expect(kept.map((m) => m.id)).toEqual([messages.young]);
  });

  it('an operator sets EVENT_RETENTION_DAYS=1 while a delivery is still being retried (the default schedule spans about 3 days): the event stays with its pending delivery, finished ones go', async () => {
    const endpoint = await makeWebhookEndpoint(database.db);
    const short = { ...retention, eventRetentionS: 1 * 24 * 3600, deliveryRetentionS: 1 * 24 * 3600 };
    const retried = await event(day(2));
    const finished = await event(day(2));
    const pending = await delivery(endpoint.id, retried, day(2), 'pending');
    await delivery(endpoint.id, finished, day(2), 'failed');
    await maintain(database.db, now, policy, 400 * 24 * 3600, short);
    expect((await database.db.selectFrom('events').select('id').where('id', 'in', [retried, finished]).execute()).map((e) => e.id)).toEqual([retried]);
    expect((await database.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', endpoint.id).execute()).map((d) => d.id)).toEqual([pending]);
  });

  it('the defaults are written down (30 days each, sign-in addresses 90), and a retention that is not a whole number of days from 1 is refused', () => {
    expect(testConfig().sweep.retention).toEqual({ eventRetentionS: 30 * 86_400, deliveryRetentionS: 30 * 86_400, messageRetentionS: 30 * 86_400, signInAddressRetentionS: 90 * 86_400 });
    expect(DEFAULT_RETENTION).toEqual(testConfig().sweep.retention);
    expect(testConfig({ MESSAGE_RETENTION_DAYS: '7' }).sweep.retention.messageRetentionS).toBe(7 * 86_400);
    for (const [name, value] of [['EVENT_RETENTION_DAYS', '0'], ['WEBHOOK_DELIVERY_RETENTION_DAYS', '1.5'], ['MESSAGE_RETENTION_DAYS', '-3'], ['SESSION_RETENTION_DAYS', '0'], ['SIGN_IN_ADDRESS_RETENTION_DAYS', '0']] as const) {
      expect(() => testConfig({ [name]: value }), name).toThrow(new RegExp(`${name}: expected a whole number of days`));
    }
  });
});
