// Sign-in throttling lives in PostgreSQL: two server instances (each with its own pool) on one
// database count the same failures. Failures block the pair (e-mail, client IP) and the client IP;
// the account as a whole only slows down, so a stranger cannot lock the owner out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser } from './support/sessions.js';
import { secondInstance } from './support/second-instance.js';
import { ManualClock } from '../src/clock.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const attempt = (app: Parameters<typeof request>[0], email: string, password: string, ip?: string) => {
  const req = request(app).post('/sessions');
  if (ip) req.set('x-forwarded-for', ip);
  return req.send({ session: { email, password } });
};

describe('sign-in throttling', () => {
  it('shares the per-e-mail-and-IP count between two server instances; during the block the right password from that IP is refused too', async () => {
    const clock = new ManualClock(new Date('2026-06-01T10:00:00.000Z'));
    const env = { SIGN_IN_MAX_FAILURES_PER_EMAIL_AND_IP: '4' };
    const first = createTestApp(database.db, { clock, env }).app;
    const second = await secondInstance(database.url, { clock, env });
    try {
      const user = await createUser(database.db);
      for (const app of [first, second.app, first, second.app]) {
        expect((await attempt(app, user.email, 'wrong password!')).status).toBe(401);
      }
      const locked = await attempt(first, user.email, user.password);
      expect(locked.status).toBe(429);
      expectContractResponse(locked, 'POST', '/sessions');
      expect(locked.body.code).toBe('rate_limited');
      expect(Number(locked.headers['retry-after'])).toBe(900);
      expect(locked.body.retry_after).toBe(900);
      expect((await attempt(second.app, user.email, user.password)).status).toBe(429);
      clock.advance(600_000);
      expect(Number((await attempt(second.app, user.email, user.password)).headers['retry-after'])).toBe(300);
      clock.advance(300_000);
      expect((await attempt(second.app, user.email, user.password)).status).toBe(201);
    } finally {
      await second.close();
    }
  });

  it('counts unknown e-mails too (their attempts from many addresses slow down), and limits per client IP across e-mails', async () => {
    const clock = new ManualClock(new Date('2026-07-01T10:00:00.000Z'));
    const env = { SIGN_IN_ACCOUNT_SLOWDOWN_AFTER: '2', SIGN_IN_MAX_FAILURES_PER_IP: '3', TRUST_PROXY: 'loopback' };
    const { app } = createTestApp(database.db, { clock, env });
    expect((await attempt(app, 'ghost@example.com', 'whatever pass', '198.51.100.1')).status).toBe(401);
    expect((await attempt(app, 'ghost@example.com', 'whatever pass', '198.51.100.2')).status).toBe(401);
    expect((await attempt(app, 'GHOST@example.com', 'whatever pass', '198.51.100.3')).status).toBe(429);

    const user = await createUser(database.db);
    for (const email of ['a1@example.com', 'a2@example.com', 'a3@example.com']) {
      expect((await attempt(app, email, 'whatever pass', '198.51.100.9')).status).toBe(401);
    }
    expect((await attempt(app, user.email, user.password, '198.51.100.9')).status).toBe(429);
    expect((await attempt(app, user.email, user.password, '198.51.100.10')).status).toBe(201);
  });

  it('holds the limit against a burst of parallel guesses on two server instances: attempts in flight count', async () => {
    const clock = new ManualClock(new Date('2026-09-01T10:00:00.000Z'));
    const env = { SIGN_IN_MAX_FAILURES_PER_EMAIL_AND_IP: '4' };
    const first = createTestApp(database.db, { clock, env }).app;
    const second = await secondInstance(database.url, { clock, env });
    try {
      const user = await createUser(database.db);
      // 24 guesses sent at once: each is checked before any hash has finished. Counting only
      // finished failures would let all 24 through to the hash.
      const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => attempt(i % 2 ? first : second.app, user.email, `wrong guess ${i}`)));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 401)).toHaveLength(4);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20);
      expect((await attempt(first, user.email, user.password)).status).toBe(429);
    } finally {
      await second.close();
    }
  });
});

describe('lockout abuse', () => {
  const OWNER_HOME = '192.0.2.10';
  const securityEvents = (userId: string, type: string) =>
    database.db.selectFrom('security_events').select(['ip_address', 'details']).where('user_id', '=', userId).where('type', '=', type).orderBy('id').execute();

  it("a stranger's failed sign-ins do not lock the owner out", async () => {
    const clock = new ManualClock(new Date('2026-11-01T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock, env: { TRUST_PROXY: 'loopback' } });
    const owner = await createUser(database.db);
    const stranger = '203.0.113.66';
    for (let i = 0; i < 10; i++) expect((await attempt(app, owner.email, `guess number ${i}`, stranger)).status).toBe(401);
    const blocked = await attempt(app, owner.email, owner.password, stranger);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBe(900);
    // The owner, from their own address (never used before), gets in at once...
    expect((await attempt(app, owner.email, owner.password, OWNER_HOME)).status).toBe(201);
    // ...and that does not unblock the stranger.
    expect((await attempt(app, owner.email, owner.password, stranger)).status).toBe(429);
    const [throttled] = await securityEvents(owner.id, 'sign_in_throttled');
    expect(throttled).toMatchObject({ ip_address: stranger, details: { limit: 'email_and_ip', retry_after: 900 } });
  });

  it('a guess from many addresses slows the account down, more with every failure, while the owner still gets in from their own address', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00.000Z'));
    const env = { TRUST_PROXY: 'loopback', SIGN_IN_ACCOUNT_SLOWDOWN_AFTER: '5', SIGN_IN_ACCOUNT_MAX_DELAY_S: '60' };
    const { app } = createTestApp(database.db, { clock, env });
    const owner = await createUser(database.db);
    // The owner has signed in from home before: that address is theirs.
    expect((await attempt(app, owner.email, owner.password, OWNER_HOME)).status).toBe(201);

    // A botnet: every guess from a new address, so no address ever reaches its own limits.
    let next = 1;
    const guess = () => attempt(app, owner.email, `botnet guess ${next}`, `198.51.100.${next++}`);
    for (let i = 0; i < 5; i++) expect((await guess()).status).toBe(401);
    const waits: number[] = [];
    for (let round = 0; round < 8; round++) {
      const slowed = await guess();
      expect(slowed.status).toBe(429);
      const wait = Number(slowed.headers['retry-after']);
      waits.push(wait);
      // While the botnet waits, the owner signs in from home at once.
      if (round === 3) expect((await attempt(app, owner.email, owner.password, OWNER_HOME)).status).toBe(201);
      clock.advance(wait * 1000);
      expect((await guess()).status).toBe(401);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 60, 60]);
    // From an address the account never used, the owner is slowed like anyone, not locked out.
    const elsewhere = await attempt(app, owner.email, owner.password, '192.0.2.99');
    expect(elsewhere.status).toBe(429);
    clock.advance(Number(elsewhere.headers['retry-after']) * 1000);
    expect((await attempt(app, owner.email, owner.password, '192.0.2.99')).status).toBe(201);
    const slowedDown = await securityEvents(owner.id, 'sign_in_throttled');
    expect(slowedDown).toHaveLength(9);
    expect(slowedDown.every((event) => (event.details as { limit?: string }).limit === 'account')).toBe(true);
  });

  it('a parallel burst from many addresses on two server instances stops at the account slowdown: attempts in flight count', async () => {
    const clock = new ManualClock(new Date('2026-11-03T10:00:00.000Z'));
    const env = { TRUST_PROXY: 'loopback', SIGN_IN_ACCOUNT_SLOWDOWN_AFTER: '4' };
    const first = createTestApp(database.db, { clock, env }).app;
    const second = await secondInstance(database.url, { clock, env });
    try {
      const user = await createUser(database.db);
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) => attempt(i % 2 ? first : second.app, user.email, `wrong guess ${i}`, `198.51.100.${i + 1}`)),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 401)).toHaveLength(4);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    } finally {
      await second.close();
    }
  });
});

describe('IPv6: a network, not an address, is one client', () => {
  const inNetwork = (network: string, i: number) => `${network}:${(0x1000 + i).toString(16)}:${i}:0:${i + 1}`;

  it('an attacker rotating through the addresses of one IPv6 /64 is blocked like a single address, for the pair and across e-mails', async () => {
    const clock = new ManualClock(new Date('2026-11-04T10:00:00.000Z'));
    const env = { TRUST_PROXY: 'loopback', SIGN_IN_MAX_FAILURES_PER_EMAIL_AND_IP: '4', SIGN_IN_MAX_FAILURES_PER_IP: '6' };
    const { app } = createTestApp(database.db, { clock, env });
    const owner = await createUser(database.db);
    const attacker = '2001:db8:aa:1';
    // A new address of the /64 for every guess: the pair (e-mail, network) stops at its limit (4).
    for (let i = 0; i < 4; i++) expect((await attempt(app, owner.email, `v6 guess ${i}`, inNetwork(attacker, i))).status).toBe(401);
    const blocked = await attempt(app, owner.email, owner.password, inNetwork(attacker, 99));
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe('rate_limited');
    // The event names the very address that was refused, not the network.
    const [event] = await database.db.selectFrom('security_events').select(['ip_address', 'details']).where('user_id', '=', owner.id).where('type', '=', 'sign_in_throttled').execute();
    expect(event).toMatchObject({ ip_address: inNetwork(attacker, 99), details: { limit: 'email_and_ip' } });
    // Spraying other e-mails from another /64, address by address: the network's count across e-mails (6) stops it.
    const sprayer = '2001:db8:aa:2';
    for (let i = 0; i < 6; i++) expect((await attempt(app, `sprayed${i}@example.com`, 'spray guess 1', inNetwork(sprayer, i))).status).toBe(401);
    const sprayed = await attempt(app, 'sprayed-more@example.com', 'spray guess 1', inNetwork(sprayer, 50));
    expect(sprayed.status).toBe(429);
    // The owner, from another network, gets in at once.
    expect((await attempt(app, owner.email, owner.password, '2001:db8:bb:1::7')).status).toBe(201);
  });

  it('an IPv4 address written as IPv4-mapped IPv6 is counted as that IPv4 address', async () => {
    const clock = new ManualClock(new Date('2026-11-05T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock, env: { TRUST_PROXY: 'loopback' } });
    const owner = await createUser(database.db);
    for (let i = 0; i < 10; i++) {
      const ip = i % 2 ? '203.0.113.77' : '::ffff:203.0.113.77';
      expect((await attempt(app, owner.email, `mapped guess ${i}`, ip)).status).toBe(401);
    }
    expect((await attempt(app, owner.email, owner.password, '203.0.113.77')).status).toBe(429);
    expect((await attempt(app, owner.email, owner.password, '::ffff:203.0.113.77')).status).toBe(429);
  });

  it('a successful sign-in clears the failures of its own network: the owner mistyping on a phone whose address changes within the /64', async () => {
    const clock = new ManualClock(new Date('2026-11-06T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock, env: { TRUST_PROXY: 'loopback' } });
    const owner = await createUser(database.db);
    const phone = '2001:db8:cc:1';
    for (let i = 0; i < 9; i++) expect((await attempt(app, owner.email, `typo ${i}`, inNetwork(phone, i))).status).toBe(401);
    expect((await attempt(app, owner.email, owner.password, inNetwork(phone, 20))).status).toBe(201);
    // The count starts again: nine more typos from yet other addresses of the /64 are not blocked.
    for (let i = 0; i < 9; i++) expect((await attempt(app, owner.email, `typo again ${i}`, inNetwork(phone, 30 + i))).status).toBe(401);
    expect((await attempt(app, owner.email, owner.password, inNetwork(phone, 40))).status).toBe(201);
  });
});

describe('password change throttling', () => {
  it('counts a wrong current password as a failed attempt and, once locked, refuses even the right one', async () => {
    const clock = new ManualClock(new Date('2026-08-01T10:00:00.000Z'));
    const env = { SIGN_IN_MAX_FAILURES_PER_EMAIL_AND_IP: '3' };
    const { app } = createTestApp(database.db, { clock, env });
    const user = await createUser(database.db);
    const signedIn = await attempt(app, user.email, user.password);
    expect(signedIn.status).toBe(201);
    const change = (current: string, accessToken: string = signedIn.body.access_token) =>
      request(app)
        .put('/me/password')
        .set('authorization', `Bearer ${accessToken}`)
        .send({ current_password: current, new_password: 'a brand new passphrase of mine' });
    for (let i = 0; i < 3; i++) {
      const wrong = await change('not my password at all');
      expect(wrong.status).toBe(400);
      expect(wrong.body.code).toBe('invalid_current_password');
    }
    const locked = await change(user.password);
    expect(locked.status).toBe(429);
    expectContractResponse(locked, 'PUT', '/me/password');
    expect(Number(locked.headers['retry-after'])).toBe(900);
    // The same lock guards sign-in: the guesses were made against this account.
    expect((await attempt(app, user.email, user.password)).status).toBe(429);
    clock.advance(900_000); // the window has passed (and the first access token has expired)
    const again = await attempt(app, user.email, user.password);
    expect(again.status).toBe(201);
    expect((await change(user.password, again.body.access_token)).status).toBe(204);
  });

  it('does not count a successful password change as a failure', async () => {
    const clock = new ManualClock(new Date('2026-10-01T10:00:00.000Z'));
    const env = { SIGN_IN_MAX_FAILURES_PER_EMAIL_AND_IP: '2' };
    const { app } = createTestApp(database.db, { clock, env });
    const user = await createUser(database.db);
    const signedIn = await attempt(app, user.email, user.password);
    let password = user.password;
    for (let i = 0; i < 3; i++) {
      const next = `passphrase number ${i} of mine`;
      const changed = await request(app)
        .put('/me/password')
        .set('authorization', `Bearer ${signedIn.body.access_token}`)
        .send({ current_password: password, new_password: next });
      expect(changed.status).toBe(204);
      password = next;
    }
    expect((await attempt(app, user.email, password)).status).toBe(201);
  });
});
