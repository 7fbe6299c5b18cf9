// The property-based fuzzer: requests generated from the contract (valid, boundary and broken) sent
// to the real app over HTTP. The properties, for every request: no 5xx; every error is a
// problem+json document; every answer is one the contract documents, with a body matching its
// schema; a request that breaks the contract is refused with a 4xx; and a refused request leaves
// every table as it was (no partial write). FUZZ_REQUESTS sets the count (`make fuzz` sends more).
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Response } from 'supertest';
import { createTestApp, createTestDatabase, spec, type TestDatabase } from './support/context.js';
import { ANSWERED_BEFORE_ROUTING, expectContractResponse } from './support/contract.js';
import { HttpClient, type RawResponse } from './support/http-client.js';
import { RequestArbitraries, type Credential, type FuzzRequest } from './support/fuzz/arbitraries.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import { installWriteJournal, journalSince, unexpectedWrites } from './support/write-journal.js';
import { makeApiKey, makeRole, makeTask } from './support/access-fixtures.js';
import { OPERATOR } from '../src/auth/authority.js';
import { indexOperations, operationMatcher, type JsonSchema } from '../src/contract/spec.js';
import { KeyInflector, type Inflection } from '../src/contract/inflection.js';
import { parseInflection } from '../src/http/inflection.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { generateSecret } from '../src/auth/secrets/secrets.js';
import { createHttpServer } from '../src/http/server.js';
import { buildServices } from '../src/composition.js';
import type { Dependencies } from '../src/dependencies.js';
import { createUser } from './support/sessions.js';
import { dumpDatabase, secretsIn } from './support/secret-scan.js';

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const BODY_LIMIT = 100 * 1024;
/** Every so many requests, every table is digested to check the write journal against it. */
const DIGEST_EVERY = 500;

let database: TestDatabase;
let deps: Dependencies;
let server: Server;
let client: HttpClient;
let tables: string[];
let admin: { id: string; password: string };
/** Genuine and refused credentials, issued by the service's own code (sign-in, API key service). */
let credentials: Credential[];
/** The signed-in administrator's bearer: its header is replaced when the fuzzer signs that session out. */
let adminBearer: Credential;
/** Things the fuzzer may act on by id (never its own credentials): a user, a role, an API key, a session. */
let knownIds: Record<string, string[]>;
/** Every password, token and key the fuzzer held or was answered, for the secrets scan at the end. */
const secrets = new Map<string, string>();
const keep = (value: unknown, what: string) => {
  if (typeof value === 'string' && value) secrets.set(value, what);
};
let logText: () => string;

/** A real sign-in through the service (from an address of its own, so the fuzzer's failed sign-ins from 127.0.0.1 never lock it out). */
async function signInAdmin(): Promise<string> {
  const { email } = await database.db.selectFrom('users').select('email').where('id', '=', admin.id).executeTakeFirstOrThrow();
  const outcome = await buildServices(deps).signIn.withPassword(email, admin.password, { ip: '192.0.2.10', userAgent: 'fuzzer' });
  if (!('tokens' in outcome)) throw new Error('the fuzzed administrator has no second factor: the password alone signs in');
  const set = outcome.tokens;
  keep(set.access_token, 'admin access token');
  keep(set.refresh_token, 'admin refresh token');
  return set.access_token;
}

beforeAll(async () => {
  database = await createTestDatabase();
  const made = createTestApp(database.db, { env: { LOG_LEVEL: 'silent' }, options: { bodyLimitBytes: BODY_LIMIT } });
  deps = made.deps;
  logText = made.logs.text;
  server = createHttpServer(made.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new HttpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 1);

  const adminUser = await createUser(database.db, { permissions: [...PERMISSIONS] });
  admin = { id: adminUser.id, password: adminUser.password };
  keep(adminUser.password, 'admin password');
  const signedIn = await client.send({ method: 'POST', path: '/sessions', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session: { email: adminUser.email, password: adminUser.password } }) });
  if (signedIn.status !== 201) throw new Error(`sign-in for the fuzzer answered ${signedIn.status}: ${signedIn.text}`);
  adminBearer = { name: 'signed-in admin bearer', headers: { authorization: `Bearer ${(signedIn.body as { access_token: string }).access_token}` }, genuine: true };

  const clock = made.clock;
  const allKey = await makeApiKey(database.db, [...PERMISSIONS], { clock });
  const readKey = await makeApiKey(database.db, ['users.list', 'users.read'], { clock });
  const revokedKey = await makeApiKey(database.db, [...PERMISSIONS], { clock });
  await revokedKey.service.revoke(OPERATOR, revokedKey.id);
  const rotatedKey = await makeApiKey(database.db, [...PERMISSIONS], { clock });
  const rotation = rotatedKey.service.draftRotation(OPERATOR, rotatedKey.id, 0);
  const rotatedTo = await database.db.transaction().execute((trx) => rotatedKey.service.rotate(trx, OPERATOR, rotation));
  for (const key of [allKey, readKey, revokedKey, rotatedKey]) keep(key.secret, 'API key');
  keep(rotatedTo.secret, 'API key');
  credentials = [
    adminBearer,
    { name: 'API key with every permission', headers: { 'x-api-key': allKey.secret }, genuine: true },
    { name: 'API key with users.list and users.read', headers: { 'x-api-key': readKey.secret }, genuine: true },
    { name: 'revoked API key', headers: { 'x-api-key': revokedKey.secret }, genuine: false },
    { name: 'API key rotated away (no grace)', headers: { 'x-api-key': rotatedKey.secret }, genuine: false },
    { name: 'unknown well-formed API key', headers: { 'x-api-key': generateSecret('bok') }, genuine: false },
    { name: 'unknown well-formed access token', headers: { authorization: `Bearer ${generateSecret('boa')}` }, genuine: false },
    { name: 'garbage API key', headers: { 'x-api-key': 'not-a-key' }, genuine: false },
    { name: 'garbage bearer', headers: { authorization: 'Bearer not-a-token' }, genuine: false },
  ];

  const victim = await createUser(database.db);
  keep(victim.password, 'password');
  await buildServices(deps).signIn.withPassword(victim.email, victim.password, { ip: '192.0.2.11', userAgent: 'fuzzer' });
  const victimSession = await database.db.selectFrom('sessions').select('id').where('user_id', '=', victim.id).executeTakeFirstOrThrow();
  const role = await makeRole(database.db, ['users.list']);
  const spareKey = await makeApiKey(database.db, ['users.list'], { clock });
  keep(spareKey.secret, 'API key');
  const task = await makeTask(database.db, { assigneeId: victim.id });
  knownIds = { users: [victim.id], sessions: [victimSession.id], roles: [role.id], 'api-keys': [spareKey.id], tasks: [task.id], taches: [task.id] };

  tables = await tableNames(database.db);
  await installWriteJournal(database.db, tables);
});

afterAll(async () => {
  client?.close();
  await new Promise((resolve) => server?.close(resolve));
  await database?.destroy();
});

const operations = indexOperations(spec);
const match = operationMatcher(operations);
const inflector = new KeyInflector(spec);
const PROBLEM_SCHEMA = { $ref: '#/components/schemas/Problem' };

/** The answer with its keys back in snake_case, as the contract writes them (x-api-inflection styles every JSON body). */
function canonical(req: FuzzRequest, res: RawResponse): RawResponse {
  let style: Inflection;
  try {
    style = parseInflection(req.headers['x-api-inflection']);
  } catch {
    return res;
  }
  if (style === 'snake' || res.body === undefined) return res;
  const op = match(req.method, req.path.split('?')[0]!);
  const schema: JsonSchema | undefined = res.status >= 400 ? PROBLEM_SCHEMA : op?.responseSchemas.get(res.status);
  const body = inflector.toSnake(res.body, schema, style);
  return { ...res, body, text: JSON.stringify(body) };
}

/** fast-check prints the whole counterexample; a 100 KB body would drown the report. */
function shortReport(details: fc.RunDetails<[FuzzRequest]>): string {
  const req = details.counterexample?.[0];
  const shown = req ? { ...req, body: req.body && req.body.length > 400 ? `${req.body.slice(0, 400)}... (${req.body.length} chars)` : req.body, headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, v.length > 200 ? `${v.slice(0, 200)}... (${v.length} chars)` : v])) } : undefined;
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  return `fuzzing failed after ${details.numRuns} requests (replay: FUZZ_SEED=${details.seed}, path ${details.counterexamplePath})\n${JSON.stringify(shown, null, 2)}\n${error.slice(0, 3000)}`;
}

/** 503 answered by an operation whose handler is not built yet; counted apart. */
function isNotBuiltYet(res: RawResponse): boolean {
  const body = res.body as { code?: string; detail?: string } | undefined;
  return res.status === 503 && body?.code === 'service_unavailable' && /not available in this build yet/.test(body.detail ?? '');
}

describe('fuzzing every operation of the contract', () => {
  it(`answers ${REQUESTS} generated requests without a 5xx, off-contract answer or partial write`, { timeout: 900_000 }, async () => {
    const arbitraries = new RequestArbitraries(spec, credentials, BODY_LIMIT, knownIds);
    const request = fc.oneof(...operations.map((op) => arbitraries.forOperation(op)));
    const stats = {
      sent: 0,
      byStatus: new Map<number, number>(),
      byOperation: new Map<string, number>(),
      successByOperation: new Map<string, number>(),
      byCredential: new Map<string, Record<string, number>>(),
      notBuiltYet: 0,
      invalid: 0,
      adminSignIns: 1,
      digestChecks: 0,
      /** Where the time goes: waiting for answers, and checking the database after them. */
      msAnswering: 0,
      msCheckingWrites: 0,
    };
    let journalId = 0;
    let checkpoint = await digestTables(database.db, tables);
    /** Tables the journal saw written (beyond the columns written on purpose) since the last digest. */
    const journalled = new Set<string>();
    /**
     * Requests that had to be refused and were, not yet checked against the journal: they are
     * checked together (one query for the lot) before the next request that might succeed, so
     * that the writes of a successful request are never mixed with theirs.
     */
    let refusedBatch: string[] = [];
    const genuine = new Set(credentials.filter((c) => c.genuine).map((c) => c.name));
    const secured = new Set(operations.filter((op) => op.security.length > 0).map((op) => op.operationId));

    /** Reads the journal since the last read; the requests it covers were refused when `refused`, so only writes made on purpose are allowed. */
    async function checkJournal(refused: boolean, contexts: string[]) {
      const entries = await journalSince(database.db, journalId);
      journalId = entries.at(-1)?.id ?? journalId;
      const unexpected = unexpectedWrites(entries);
      for (const entry of unexpected) journalled.add(entry.table_name);
      if (refused) expect(unexpected, `no partial write by ${contexts.length === 1 ? 'this request' : 'one of these refused requests'}:\n${contexts.join('\n')}`).toEqual([]);
    }

    async function flushRefused() {
      if (refusedBatch.length === 0) return;
      const batch = refusedBatch;
      refusedBatch = [];
      await checkJournal(true, batch);
    }

    /** The digests must agree with the journal: a table it saw no write to is unchanged. */
    async function crossCheckJournal(context: string) {
      await flushRefused();
      const digest = await digestTables(database.db, tables);
      expect(changedTables(checkpoint, digest).filter((table) => !journalled.has(table)), `every write is journalled: ${context}`).toEqual([]);
      checkpoint = digest;
      journalled.clear();
      stats.digestChecks++;
    }

    const property = fc.asyncProperty(request, async (req: FuzzRequest) => {
      const credential = /, credential ([^,]+)(?:, inflection [^,]+)?$/.exec(req.label)?.[1] ?? 'none';
      // Broken, or without a genuine credential for an operation that needs one: it must be refused.
      const mustBeRefused = req.expect === 'invalid' || (secured.has(req.operationId) && !genuine.has(credential));
      const flushedAt = performance.now();
      if (!mustBeRefused) await flushRefused();
      stats.msCheckingWrites += performance.now() - flushedAt;
      const sentAt = performance.now();
      const res = await client.send(req, { timeoutMs: 10_000 });
      stats.msAnswering += performance.now() - sentAt;
      stats.sent++;
      // Secrets the service issued (sign-ins, refreshes, new and rotated keys) join the scan.
      const issued = (res.body ?? {}) as Record<string, unknown>;
      for (const field of ['access_token', 'accessToken', 'AccessToken', 'access-token', 'refresh_token', 'refreshToken', 'RefreshToken', 'refresh-token', 'secret', 'Secret']) keep(issued[field], `issued ${field}`);
      stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
      stats.byOperation.set(req.operationId, (stats.byOperation.get(req.operationId) ?? 0) + 1);
      if (res.status < 300) stats.successByOperation.set(req.operationId, (stats.successByOperation.get(req.operationId) ?? 0) + 1);
      const counts = stats.byCredential.get(credential) ?? {};
      counts[res.status] = (counts[res.status] ?? 0) + 1;
      stats.byCredential.set(credential, counts);
      if (req.expect === 'invalid') stats.invalid++;
      const context = `${req.method} ${req.path.slice(0, 120)} [${req.label}] -> ${res.status} ${res.text.slice(0, 300)}`;

      const answer = canonical(req, res);
      if (isNotBuiltYet(answer)) stats.notBuiltYet++;
      else expect(res.status, `no 5xx: ${context}`).toBeLessThan(500);
      if (req.expect === 'invalid') expect(res.status, `a broken request is refused: ${context}`).toBeGreaterThanOrEqual(400);
      if (mustBeRefused) expect(res.status, `refused without a genuine credential: ${context}`).toBeGreaterThanOrEqual(400);
      expect(res.text, `no stack trace: ${context}`).not.toMatch(/\bat .+\.(ts|js):\d+/);
      // SCIM's paths answer RFC 7644 errors (docs/IDENTITY.md), every other path problem documents;
      // what the HTTP parser refuses is answered before any path is read, as a problem document.
      const scimError = req.path.startsWith('/scim/') && !ANSWERED_BEFORE_ROUTING.has(res.status);
      if (res.status >= 400) expect(res.headers['content-type'], `problem+json: ${context}`).toMatch(scimError ? /^application\/(scim\+)?json/ : /^application\/problem\+json/);
      try {
        expectContractResponse(answer as unknown as Response, req.method, req.path);
      } catch (err) {
        throw new Error(`off contract: ${context}\n${(err as Error).message}`);
      }

      // No partial write: what the request committed, from the write journal (one small query),
      // now for a request that might have succeeded, with the next such request for the others.
      const checkedAt = performance.now();
      if (mustBeRefused) refusedBatch.push(context);
      else await checkJournal(res.status >= 400, [context]);
      if (stats.sent % DIGEST_EVERY === 0) await crossCheckJournal(context);
      stats.msCheckingWrites += performance.now() - checkedAt;
      // Nothing ever lands on Object.prototype, whatever `__proto__` keys were sent.
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();

      // The fuzzer signed its own session out (or revoked it): sign in again, so that the bearer
      // keeps reaching the handlers. Its writes are not the next request's.
      if (res.status === 401 && req.headers.authorization === adminBearer.headers.authorization) {
        const probe = await client.send({ method: 'GET', path: '/me', headers: { ...adminBearer.headers } });
        if (probe.status === 401) {
          adminBearer.headers.authorization = `Bearer ${await signInAdmin()}`;
          stats.adminSignIns++;
          const signInWrites = await journalSince(database.db, journalId);
          journalId = signInWrites.at(-1)?.id ?? journalId;
          for (const entry of unexpectedWrites(signInWrites)) journalled.add(entry.table_name);
        }
      }
    });

    const details = await fc.check(property, { numRuns: REQUESTS, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: REQUESTS > 20_000 });
    if (details.failed) throw new Error(shortReport(details));
    await crossCheckJournal('at the end');
    expect(refusedBatch).toEqual([]);

    const summary = {
      sent: stats.sent,
      invalidByConstruction: stats.invalid,
      notBuiltYet503: stats.notBuiltYet,
      adminSignIns: stats.adminSignIns,
      digestChecks: stats.digestChecks,
      secondsAnswering: Math.round(stats.msAnswering / 1000),
      secondsCheckingWrites: Math.round(stats.msCheckingWrites / 1000),
      byStatus: Object.fromEntries([...stats.byStatus].sort((a, b) => a[0] - b[0])),
      byOperation: Object.fromEntries(stats.byOperation),
      successByOperation: Object.fromEntries(stats.successByOperation),
      byCredential: Object.fromEntries(stats.byCredential),
    };
    process.stdout.write(`fuzz summary ${JSON.stringify(summary)}\n`);
    expect(stats.sent).toBeGreaterThanOrEqual(REQUESTS);
    for (const op of operations) expect(stats.byOperation.get(op.operationId) ?? 0, op.operationId).toBeGreaterThan(0);
    // Genuine credentials got past authentication to the handlers: some of their requests succeeded.
    for (const credential of credentials.filter((c) => c.genuine)) {
      const counts = stats.byCredential.get(credential.name) ?? {};
      const succeeded = Object.entries(counts).filter(([status]) => Number(status) < 300).reduce((n, [, count]) => n + count, 0);
      expect(succeeded, `successes with the ${credential.name}`).toBeGreaterThan(0);
    }
  });
});

describe('the secrets scan of the fuzzing run', () => {
  it('finds none of the passwords, tokens or keys it held or was issued in its log lines or in a dump of its database', () => {
    const logs = logText();
    const dump = dumpDatabase(database.url);
    expect(logs.split('\n').length, 'the logs hold the run').toBeGreaterThan(REQUESTS);
    expect(dump).toMatch(/COPY public\.api_key_secrets/);
    expect(secretsIn(logs, secrets), 'secrets in the log lines').toEqual([]);
    expect(secretsIn(dump, secrets), 'secrets in the database dump').toEqual([]);
    process.stdout.write(`fuzz secrets scan ${JSON.stringify({ secrets: secrets.size, logLines: logs.split('\n').length, dumpBytes: dump.length })}\n`);
  });
});

describe('the write journal behind the no-partial-write check', () => {
  it('sees a committed write, not a rolled-back one, and lets through only the columns written on purpose', async () => {
    const start = (await journalSince(database.db, 0)).at(-1)?.id ?? 0;
    const key = await makeApiKey(database.db, ['users.list']);
    const afterCreate = await journalSince(database.db, start);
    expect(unexpectedWrites(afterCreate).map((e) => `${e.op} ${e.table_name}`).sort()).toEqual(['INSERT api_key_secrets', 'INSERT api_keys']);
    const mark = afterCreate.at(-1)!.id;

    await database.db.updateTable('api_keys').set({ last_used_at: new Date(), last_used_ip: '192.0.2.1' }).where('id', '=', key.id).execute();
    const lastUsed = await journalSince(database.db, mark);
    expect(lastUsed.map((e) => e.columns)).toEqual([['last_used_at', 'last_used_ip', 'version']]);
    expect(unexpectedWrites(lastUsed)).toEqual([]);

    await expect(
      database.db.transaction().execute(async (trx) => {
        await trx.updateTable('api_keys').set({ name: 'renamed' }).where('id', '=', key.id).execute();
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await journalSince(database.db, lastUsed.at(-1)!.id)).toEqual([]);

    await database.db.updateTable('api_keys').set({ name: 'renamed', last_used_ip: '192.0.2.2' }).where('id', '=', key.id).execute();
    expect(unexpectedWrites(await journalSince(database.db, lastUsed.at(-1)!.id)).map((e) => e.columns)).toEqual([['last_used_ip', 'name', 'version']]);
  });
});
