// Partner-grade keys on two server processes behind nginx, on real PostgreSQL: what one process
// decides, the pair keeps. The processes read the time from a file (TEST_CLOCK_FILE) that the
// test holds inside one rate-limit window and then moves to the next, and reconcile only when a
// limit needs it (RATE_LIMIT_SYNC_INTERVAL_MS=0): nothing depends on how fast the machine is.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBalancedService, type BalancedService } from './support/balanced-service.js';
import type { HttpClient, RawResponse } from './support/http-client.js';
import { ApiKeyService } from '../src/api-keys/service.js';
import { OPERATOR } from '../src/auth/authority.js';
import { systemClock } from '../src/clock.js';
import { leakReporter, reportOf } from './support/leak-reporter.js';
import { answersOnceHeard, heardBudget } from './support/key-cache.js';

let service: BalancedService;
const reporter = leakReporter();
let dir: string;
let clockFile: string;
/** The start of the window the test holds the processes in. */
let now: number;

const setTime = (ms: number) => {
  now = ms;
  writeFileSync(clockFile, new Date(ms).toISOString());
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'partner-keys-'));
  clockFile = join(dir, 'now');
  // A minute ahead, at the start of a 10-second window.
  setTime(Math.ceil(Date.now() / 10_000) * 10_000 + 60_000);
  service = await startBalancedService(2, { TEST_CLOCK_FILE: clockFile, RATE_LIMIT_SYNC_INTERVAL_MS: '0', LEAK_REPORT_KEYS_FILE: reporter.keysFile });
}, 120_000);

afterAll(async () => {
  const codes = await service?.stop();
  rmSync(dir, { recursive: true, force: true });
  expect(codes?.every((code) => code === 0)).toBe(true);
});

async function key(fields: { rate_limit?: { requests: number; per_seconds: number }; allowed_ips?: string[] }) {
  const keys = new ApiKeyService({ db: service.database.db, clock: systemClock });
  const draft = keys.draft(OPERATOR, { name: `balanced-${Math.random().toString(36).slice(2, 10)}`, permissions: ['users.list'], ...fields });
  const { key: created, secret } = await service.database.db.transaction().execute((trx) => keys.create(trx, OPERATOR, draft));
  return { id: created.id, secret };
}

const listUsers = (client: HttpClient, secret: string, ip = '192.0.2.10') =>
  client.send({ method: 'GET', path: '/users?limit=1', headers: { 'x-api-key': secret, 'x-forwarded-for': ip } });

/** Which process answered each request, from nginx's access log. */
async function upstreamsOf(answers: RawResponse[]) {
  const ids = answers.map((res) => String(res.headers['x-request-id']));
  await expect.poll(() => ids.every((id) => service.nginx.accessLog().some((line) => line.requestId === id)), { timeout: 5_000, interval: 20 }).toBe(true);
  const log = service.nginx.accessLog();
  return new Set(ids.map((id) => log.find((line) => line.requestId === id)?.upstream));
}

describe('a key limited to 50 requests per 10 s, through two processes', () => {
  it('gets at most 55 through the pair in one window (the stated bound: N + (P − 1) × floor(0.1 × N)), then 429 with Retry-After on both', async () => {
    const limited = await key({ rate_limit: { requests: 50, per_seconds: 10 } });
    const answers: RawResponse[] = [];
    // 8 at a time, 120 in all: both processes are pushed past their share at once.
    for (let i = 0; i < 15; i++) answers.push(...(await Promise.all(Array.from({ length: 8 }, () => listUsers(service.client, limited.secret)))));
    const through = answers.filter((res) => res.status === 200).length;
    expect(through).toBeGreaterThanOrEqual(50);
    expect(through).toBeLessThanOrEqual(55);
    const refused = answers.filter((res) => res.status === 429);
    expect(refused.length).toBe(answers.length - through);
    for (const res of refused) {
      expect(res.body).toMatchObject({ code: 'rate_limited' });
      expect(Number(res.headers['retry-after'])).toBe(10);
      expect(res.headers['ratelimit-policy']).toBe('"api-key";q=50;w=10');
    }
    expect(await upstreamsOf(answers)).toHaveLength(2);
    // Both processes refuse it now, whichever is asked.
    for (const direct of service.direct) expect((await listUsers(direct, limited.secret)).status).toBe(429);
  });

  it('counts down in RateLimit across the pair and starts again with the next window', async () => {
    // Under 10 requests a process owes the other nothing (floor(0.1 × 5) = 0): exact across processes.
    const limited = await key({ rate_limit: { requests: 5, per_seconds: 10 } });
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await listUsers(service.direct[i % 2]!, limited.secret);
      seen.push(`${res.status} ${res.headers['ratelimit']}`);
    }
    expect(seen).toEqual([
      '200 "api-key";r=4;t=10',
      '200 "api-key";r=3;t=10',
      '200 "api-key";r=2;t=10',
      '200 "api-key";r=1;t=10',
      '200 "api-key";r=0;t=10',
      '429 "api-key";r=0;t=10',
    ]);
    setTime(now + 4_000);
    expect((await listUsers(service.direct[1]!, limited.secret)).headers['ratelimit']).toBe('"api-key";r=0;t=6');
    setTime(now + 6_000);
    for (const direct of service.direct) {
      const res = await listUsers(direct, limited.secret);
      expect(res.status).toBe(200);
    }
    expect((await listUsers(service.direct[0]!, limited.secret)).headers['ratelimit']).toBe('"api-key";r=2;t=10');
  });
});

describe('a key with an IP allowlist, on both processes', () => {
  it('is refused from an address outside its list by each process, and served from inside it', async () => {
    const fenced = await key({ allowed_ips: ['203.0.113.0/24'] });
    for (const direct of service.direct) {
      const outside = await listUsers(direct, fenced.secret, '198.51.100.20');
      expect(outside.status).toBe(403);
      expect(outside.body).toMatchObject({ code: 'ip_not_allowed' });
      expect(outside.text).not.toContain('203.0.113');
      expect((await listUsers(direct, fenced.secret, '203.0.113.77')).status).toBe(200);
    }
  });
});

describe('a leak report, on two processes', () => {
  it('revokes the key on both processes as soon as each has heard of it', { timeout: heardBudget(2) }, async () => {
    const leaked = await key({});
    // Both processes have served the key just before.
    for (const direct of service.direct) expect((await listUsers(direct, leaked.secret)).status).toBe(200);
    const report = await service.client.send(reporter.request(reportOf([leaked.secret])));
    expect(report.status).toBe(200);
    expect((report.body as { label: string }[])[0]!.label).toBe('true_positive');
    for (const direct of service.direct) {
      const res = await answersOnceHeard(() => listUsers(direct, leaked.secret), 401);
      expect(res.body).toMatchObject({ code: 'invalid_api_key' });
    }
  });

  it('a forged report sent to either process, and a replay of a genuine one, change nothing', async () => {
    const target = await key({});
    const body = reportOf([target.secret]);
    for (const direct of service.direct) {
      const forged = await direct.send(reporter.request(body, leakReporter()));
      expect(forged.status).toBe(401);
      expect((await listUsers(direct, target.secret)).status).toBe(200);
    }
    const genuine = reporter.request(body);
    expect((await service.direct[0]!.send(genuine)).status).toBe(200);
    const journal = async () =>
      (await service.database.db.selectFrom('security_events').select((eb) => eb.fn.countAll<string>().as('n')).where('target_id', '=', target.id).executeTakeFirstOrThrow()).n;
    const before = await journal();
    const replay = await service.direct[1]!.send(genuine);
    expect(replay.status).toBe(200);
    expect((replay.body as { label: string }[])[0]!.label).toBe('false_positive');
    expect(await journal()).toBe(before);
  });
});
