// The audit trail is tamper-evident: events are sealed in batches by a hash chain, `verify`
// re-checks the chain and every event still present and names the first that does not match;
// retention deletes whole sealed batches and the chain still verifies.
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { recordAuditEvent } from '../src/audit/recorder.js';
import { sealAuditEvents } from '../src/audit/seal.js';
import { verifyAuditTrail } from '../src/audit/verify.js';
import { deleteExpiredAuditEvents } from '../src/audit/retention.js';
import { DEFAULT_RETENTION, maintain } from '../src/maintenance/sweeper.js';
import { testConfig } from './support/context.js';
import { runCli } from './support/cli.js';
import { budget } from './support/budgets.js';
import { asAnotherClient } from './support/one-connection.js';
import { GENESIS, batchHash, eventHashV1, sealHash, selectEventsToHash } from '../src/audit/hash.js';
import { ErasureService } from '../src/erasure/service.js';
import { OPERATOR } from '../src/auth/authority.js';
import { createUser } from './support/sessions.js';
import { ManualClock } from '../src/clock.js';

let database: TestDatabase;
beforeEach(async () => {
  database = await createTestDatabase();
});
afterEach(() => database.destroy());

const DAY = 86_400_000;
const now = new Date('2026-11-21T12:00:00.000Z');
const retentionS = 400 * 86_400;
const verify = (at = now) => verifyAuditTrail(database.db, { now: at, retentionS });

/** `count` role events, one a minute, ending at `end`. */
async function record(count: number, end = now) {
  for (let i = 0; i < count; i++) {
    await recordAuditEvent(database.db, {
      type: 'role_updated',
      at: new Date(end.getTime() - (count - i) * 60_000),
      context: { actor: { type: 'cli', osUser: 'ops' }, requestId: null, ip: null, userAgent: null },
      target: { type: 'role', id: '00000000-0000-4000-8000-00000000000' + (i % 10), label: `role ${i}` },
      details: { n: i },
      changes: { before: { permissions: ['users.list'] }, after: { permissions: ['users.list', 'users.read'] } },
    });
  }
}

const eventIds = async () => (await database.db.selectFrom('security_events').select('id').orderBy('id').execute()).map((r) => r.id);

describe('sealing', () => {
  it('seals in batches chained to each other; verify passes and names the head', async () => {
    await record(25);
    expect(await sealAuditEvents(database.db, now, 10)).toEqual({ events: 25, seals: 3 });
    const seals = await database.db.selectFrom('audit_seals').selectAll().orderBy('id').execute();
    expect(seals.map((s) => s.event_count)).toEqual([10, 10, 5]);
    expect(seals[1]!.previous_hash).toEqual(seals[0]!.hash);
    expect(await database.db.selectFrom('security_events').select('id').where('seal_id', 'is', null).execute()).toEqual([]);
    const report = await verify();
    expect(report).toMatchObject({ ok: true, problem: null, seals: 3, eventsChecked: 25, eventsNotYetSealed: 0, head: seals[2]!.hash.toString('hex') });
    // Nothing new: no empty seal.
    expect(await sealAuditEvents(database.db, now, 10)).toEqual({ events: 0, seals: 0 });
  });

  it('puts an event that commits after a later one was sealed into the next batch', async () => {
    const late = database.db.transaction().execute(async (trx) => {
      await recordAuditEvent(trx, { type: 'role_deleted', at: now, context: { actor: { type: 'cli', osUser: 'ops' }, requestId: null, ip: null, userAgent: null } });
      // Another process commits and seals while the first transaction is still open.
      await asAnotherClient(async () => {
        await record(3);
        expect(await sealAuditEvents(database.db, now)).toEqual({ events: 3, seals: 1 });
      });
    });
    await late;
    expect(await sealAuditEvents(database.db, now)).toEqual({ events: 1, seals: 1 });
    expect((await verify()).ok).toBe(true);
  });

  it('counts events not sealed yet, and a second sealer at the same moment steps aside instead of forking the chain', async () => {
    await record(30);
    const [a, b] = await Promise.all([sealAuditEvents(database.db, now, 5), sealAuditEvents(database.db, now, 5)]);
    expect(a.events + b.events).toBe(30);
    expect((await verify()).ok).toBe(true);
    await record(2);
    expect(await verify()).toMatchObject({ ok: true, eventsNotYetSealed: 2 });
  });
});

describe('verify finds tampering', () => {
  beforeEach(async () => {
    await record(20);
    await sealAuditEvents(database.db, now, 10);
  });

  it('an edited event is named', async () => {
    const ids = await eventIds();
    await sql`update security_events set actor_label = 'someone else' where id = ${ids[13]}`.execute(database.db);
    const report = await verify();
    expect(report.ok).toBe(false);
    expect(report.problem).toBe(`Event ${ids[13]} does not match seal ${(await database.db.selectFrom('audit_seals').select('id').orderBy('id').execute())[1]!.id}: it was altered after sealing.`);
  });

  it('an edited event whose stored hash was recomputed to match is caught by its seal', async () => {
    const ids = await eventIds();
    await sql`update security_events set details = '{"n": 99}', hash = sha256('forged') where id = ${ids[2]}`.execute(database.db);
    expect((await verify()).problem).toMatch(new RegExp(`^Event ${ids[2]} does not match seal`));
  });

  it('a deleted event is noticed by its seal', async () => {
    const ids = await eventIds();
    await database.db.deleteFrom('security_events').where('id', '=', ids[4]!).execute();
    expect((await verify()).problem).toMatch(/^Seal \d+ covers 10 events \(ids \d+ to \d+\) but 9 are there/);
  });

  it('an altered seal, or a seal removed from the middle of the chain, is named', async () => {
    const seals = (await database.db.selectFrom('audit_seals').select('id').orderBy('id').execute()).map((s) => s.id);
    await sql`update audit_seals set event_count = 9 where id = ${seals[0]}`.execute(database.db);
    expect((await verify()).problem).toBe(`Seal ${seals[0]} does not match its own hash: it was altered.`);
    await sql`update audit_seals set event_count = 10 where id = ${seals[0]}`.execute(database.db);
    expect((await verify()).ok).toBe(true);
    await database.db.deleteFrom('security_events').where('seal_id', '=', seals[0]!).execute();
    await database.db.deleteFrom('audit_seals').where('id', '=', seals[0]!).execute();
    expect((await verify()).problem).toBe(`Seal ${seals[1]} does not follow the start of the chain: a seal was removed, added or altered.`);
  });

  it('events deleted and their seal marked as if by retention, before the retention ended, are named', async () => {
    const seals = (await database.db.selectFrom('audit_seals').select('id').orderBy('id').execute()).map((s) => s.id);
    await database.db.deleteFrom('security_events').where('seal_id', '=', seals[0]!).execute();
    await database.db.updateTable('audit_seals').set({ events_deleted_at: now }).where('id', '=', seals[0]!).execute();
    expect((await verify()).problem).toBe(`Seal ${seals[0]} has lost its events before their retention ended.`);
  });

  it('the command line prints the first mismatch and exits 1', { timeout: budget({ cliRun: 2 }) }, async () => {
    const ids = await eventIds();
    const run = () => runCli(['audit', 'verify'], { databaseUrl: database.url });
    const ok = await run();
    expect(ok.stdout, ok.stderr).toMatch(/^OK: 2 seals \(0 with their events deleted by retention\), 20 events checked, 0 not sealed yet, in [\d.]+ s\.\nHead: [0-9a-f]{64}\n$/);
    await sql`update security_events set ip_address = '198.51.100.1' where id = ${ids[0]}`.execute(database.db);
    const failed = await run();
    expect(failed.status).toBe(1);
    expect(failed.stdout).toMatch(new RegExp(`^FAILED: Event ${ids[0]} does not match seal \\d+: it was altered after sealing\\.`));
  });
});

describe('retention', () => {
  it('deletes whole sealed batches past the retention, oldest first, keeps their seals, and the chain still verifies', async () => {
    await record(10, new Date(now.getTime() - 500 * DAY)); // batch 1: past the retention
    await sealAuditEvents(database.db, now, 10);
    await record(5, new Date(now.getTime() - 401 * DAY)); // batch 2: past it as well
    await record(5, new Date(now.getTime() - 10 * DAY)); //  ...with young events: the batch waits
    await sealAuditEvents(database.db, now, 10);
    await record(3);

    const result = await maintain(database.db, now, testConfig().sweep.policy, retentionS);
    expect(result).toMatchObject({ auditEventsSealed: 3, auditEventsDeleted: 10 });
    expect(await database.db.selectFrom('security_events').select('id').execute()).toHaveLength(13);
    expect(await database.db.selectFrom('audit_seals').select('id').execute()).toHaveLength(3);
    expect(await verify()).toMatchObject({ ok: true, seals: 3, sealsWithoutEvents: 1, eventsChecked: 13 });

    // The second batch's youngest event (10 days old now) passes 400 days 390 days from now.
    expect(await deleteExpiredAuditEvents(database.db, new Date(now.getTime() + 389 * DAY), retentionS)).toBe(0);
    expect(await deleteExpiredAuditEvents(database.db, new Date(now.getTime() + 391 * DAY), retentionS)).toBe(10);
    expect(await verifyAuditTrail(database.db, { now: new Date(now.getTime() + 391 * DAY), retentionS })).toMatchObject({ ok: true, sealsWithoutEvents: 2, eventsChecked: 3 });
  });

  it('is configurable (AUDIT_RETENTION_DAYS, 400 by default)', () => {
    expect(testConfig().sweep.auditRetentionS).toBe(400 * 86_400);
    expect(testConfig({ AUDIT_RETENTION_DAYS: '90' }).sweep.auditRetentionS).toBe(90 * 86_400);
  });
});

describe('sign-in address retention', () => {
  /** `count` sign-in failures from an address, one a minute, ending at `end`. */
  async function signIns(count: number, end: Date) {
    for (let i = 0; i < count; i++) {
      await recordAuditEvent(database.db, {
        type: 'sign_in_failed',
        at: new Date(end.getTime() - (count - i) * 60_000),
        context: { actor: { type: 'anonymous' }, requestId: null, ip: '198.51.100.7', userAgent: 'an old browser' },
        details: { reason: 'wrong_password' },
      });
    }
  }
  const addresses = async () => (await database.db.selectFrom('security_events').select('id').where('ip_address', 'is not', null).execute()).length;

  it('erases the address and user agent of sealed events past SIGN_IN_ADDRESS_RETENTION_DAYS; the seal still verifies and an address erased too soon is named', async () => {
    const addressRetentionS = 90 * 86_400;
    await signIns(4, new Date(now.getTime() - 100 * DAY));
    await signIns(3, new Date(now.getTime() - 10 * DAY));
    const result = await maintain(database.db, now, testConfig().sweep.policy, retentionS, { ...DEFAULT_RETENTION, signInAddressRetentionS: addressRetentionS });
    expect(result).toMatchObject({ auditEventsSealed: 7, auditAddressesErased: 4 });
    expect(await addresses()).toBe(3);
    expect(await verifyAuditTrail(database.db, { now, retentionS, signInAddressRetentionS: addressRetentionS })).toMatchObject({ ok: true, eventsChecked: 7 });
    // Nothing more to erase; the young events keep theirs until their day.
    expect(await maintain(database.db, now, testConfig().sweep.policy, retentionS, { ...DEFAULT_RETENTION, signInAddressRetentionS: addressRetentionS })).toMatchObject({ auditAddressesErased: 0 });

    // A young event's address erased by hand, as retention would: not explained by the retention, named.
    const young = await database.db.selectFrom('security_events').select(['id', 'seal_id']).where('ip_address', 'is not', null).orderBy('id').executeTakeFirstOrThrow();
    await sql`update security_events set ip_address = null, user_agent = null, where_salt = null where id = ${young.id}`.execute(database.db);
    expect((await verifyAuditTrail(database.db, { now, retentionS, signInAddressRetentionS: addressRetentionS })).problem).toBe(
      `Event ${young.id} of seal ${young.seal_id} has lost its where columns, but neither an erasure nor the sign-in address retention explains it: it was altered after sealing.`,
    );
  });

  it('is configurable (SIGN_IN_ADDRESS_RETENTION_DAYS, 90 by default)', () => {
    expect(testConfig().sweep.retention.signInAddressRetentionS).toBe(90 * 86_400);
    expect(testConfig({ SIGN_IN_ADDRESS_RETENTION_DAYS: '30' }).sweep.retention.signInAddressRetentionS).toBe(30 * 86_400);
  });
});


describe('seals written before erasure existed (event hash version 1)', () => {
  /** Seals every waiting event in one batch as the sealer did before version 2: every column hashed, no salt. */
  async function sealAsVersion1(at: Date) {
    const events = await selectEventsToHash(database.db).where('seal_id', 'is', null).execute();
    const hashes = events.map(eventHashV1);
    const times = events.map((e) => e.occurred_at).sort();
    const id = String((await sql<{ id: string }>`select nextval('audit_seals_id_seq')::text as id`.execute(database.db)).rows[0]!.id);
    const facts = {
      id,
      sealed_at: at.toISOString().replace(/Z$/, '000Z'),
      event_count: events.length,
      first_event_id: String(events[0]!.id),
      last_event_id: String(events.at(-1)!.id),
      oldest_event_at: times[0]!,
      newest_event_at: times.at(-1)!,
      batch_hash: batchHash(hashes),
      previous_hash: GENESIS,
      event_hash_version: 1,
    };
    await database.db.insertInto('audit_seals').values({ ...facts, hash: sealHash(facts) }).execute();
    for (const [i, e] of events.entries()) await database.db.updateTable('security_events').set({ seal_id: id, hash: hashes[i]! }).where('id', '=', String(e.id)).execute();
  }

  it('still verify; an erasure of a person whose events they hold keeps them verifying, and an edit of another event is named', async () => {
    const person = await createUser(database.db);
    const at = new Date(now.getTime() - DAY);
    await recordAuditEvent(database.db, { type: 'user_updated', at, context: { actor: { type: 'cli', osUser: 'ops' }, requestId: null, ip: '192.0.2.9', userAgent: 'old' }, target: { type: 'user', id: person.id }, userId: person.id, changes: { before: { last_name: 'Old' }, after: { last_name: 'New' } } });
    await record(3, at);
    await database.db.updateTable('security_events').set({ occurred_at: at }).where('seal_id', 'is', null).execute();
    await sealAsVersion1(at);
    expect(await verify()).toMatchObject({ ok: true, eventsChecked: 5 });

    await new ErasureService({ db: database.db, clock: new ManualClock(now) }).erase(OPERATOR, person.id);
    const erased = await database.db.selectFrom('security_events').selectAll().where('user_id', '=', person.id).where('type', '=', 'user_updated').executeTakeFirstOrThrow();
    expect(erased).toMatchObject({ ip_address: null, user_agent: null, target_label: null, changes: null, details: {} });
    await sealAuditEvents(database.db, now);
    expect(await verify()).toMatchObject({ ok: true });

    const other = await database.db.selectFrom('security_events').select(['id', 'seal_id']).where('type', '=', 'role_updated').orderBy('id').executeTakeFirstOrThrow();
    await database.db.updateTable('security_events').set({ target_label: 'another role' }).where('id', '=', other.id).execute();
    expect((await verify()).problem).toBe(`Event ${other.id} does not match seal ${other.seal_id}: it was altered after sealing.`);
  });
});
