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
import { expectContractResponse } from './support/contract.js';
import { HttpClient, type RawResponse } from './support/http-client.js';
import { RequestArbitraries, type Credential, type FuzzRequest } from './support/fuzz/arbitraries.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import { indexOperations, operationMatcher, type JsonSchema } from '../src/contract/spec.js';
import { KeyInflector, parseInflection, type Inflection } from '../src/http/inflection.js';
import { createAuthenticators } from '../src/auth/authenticators.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { generateSecret } from '../src/auth/secrets.js';
import { createHttpServer } from '../src/http/server.js';
import type { Principal } from '../src/auth/principal.js';
import { createUser } from './support/sessions.js';

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const BODY_LIMIT = 100 * 1024;

// Genuine credentials: a real access token of a signed-in administrator; and, until API keys
// exist (issue 4), a stand-in key principal holding every permission, so the fuzzer reaches the
// handlers behind x-api-key authentication too.
const STAND_IN_KEY = 'fuzz-stand-in-admin-key';

let database: TestDatabase;
let server: Server;
let client: HttpClient;
let tables: string[];
let adminAccessToken: string;

beforeAll(async () => {
  database = await createTestDatabase();
  const { deps } = createTestApp(database.db);
  const real = createAuthenticators(deps);
  const admin: Principal = { kind: 'api_key', apiKeyId: 'stand-in', permissions: new Set(PERMISSIONS) };
  const { app } = createTestApp(database.db, {
    env: { LOG_LEVEL: 'silent' },
    authenticators: {
      apiKey: async (secret, request) => (secret === STAND_IN_KEY ? admin : real.apiKey(secret, request)),
      bearer: real.bearer,
    },
    options: { bodyLimitBytes: BODY_LIMIT },
  });
  server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new HttpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 1);
  tables = await tableNames(database.db);
  const admin_ = await createUser(database.db, { permissions: [...PERMISSIONS] });
  const signedIn = await client.send({ method: 'POST', path: '/sessions', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session: { email: admin_.email, password: admin_.password } }) });
  if (signedIn.status !== 201) throw new Error(`sign-in for the fuzzer answered ${signedIn.status}: ${signedIn.text}`);
  adminAccessToken = (signedIn.body as { access_token: string }).access_token;
});

afterAll(async () => {
  client?.close();
  await new Promise((resolve) => server?.close(resolve));
  await database?.destroy();
});

function credentials(): Credential[] {
  return [
    { name: 'stand-in admin API key', headers: { 'x-api-key': STAND_IN_KEY }, genuine: true },
    { name: 'signed-in admin bearer', headers: { authorization: `Bearer ${adminAccessToken}` }, genuine: true },
    { name: 'unknown well-formed API key', headers: { 'x-api-key': generateSecret('bok') }, genuine: false },
    { name: 'unknown well-formed access token', headers: { authorization: `Bearer ${generateSecret('boa')}` }, genuine: false },
    { name: 'garbage API key', headers: { 'x-api-key': 'not-a-key' }, genuine: false },
    { name: 'garbage bearer', headers: { authorization: 'Bearer not-a-token' }, genuine: false },
  ];
}

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

/** 503 answered by an operation whose handler is not built yet (issues 3 and 4); counted apart. */
function isNotBuiltYet(res: RawResponse): boolean {
  const body = res.body as { code?: string; detail?: string } | undefined;
  return res.status === 503 && body?.code === 'service_unavailable' && /not available in this build yet/.test(body.detail ?? '');
}

describe('fuzzing every operation of the contract', () => {
  it(`answers ${REQUESTS} generated requests without a 5xx, off-contract answer or partial write`, { timeout: 900_000 }, async () => {
    const arbitraries = new RequestArbitraries(spec, credentials(), BODY_LIMIT);
    const request = fc.oneof(...operations.map((op) => arbitraries.forOperation(op)));
    const stats = { sent: 0, byStatus: new Map<number, number>(), byOperation: new Map<string, number>(), notBuiltYet: 0, invalid: 0 };
    let digest = await digestTables(database.db, tables);

    const property = fc.asyncProperty(request, async (req: FuzzRequest) => {
      const res = await client.send(req, { timeoutMs: 10_000 });
      stats.sent++;
      stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
      stats.byOperation.set(req.operationId, (stats.byOperation.get(req.operationId) ?? 0) + 1);
      if (req.expect === 'invalid') stats.invalid++;
      const context = `${req.method} ${req.path.slice(0, 120)} [${req.label}] -> ${res.status} ${res.text.slice(0, 300)}`;

      const answer = canonical(req, res);
      if (isNotBuiltYet(answer)) stats.notBuiltYet++;
      else expect(res.status, `no 5xx: ${context}`).toBeLessThan(500);
      if (req.expect === 'invalid') expect(res.status, `a broken request is refused: ${context}`).toBeGreaterThanOrEqual(400);
      expect(res.text, `no stack trace: ${context}`).not.toMatch(/\bat .+\.(ts|js):\d+/);
      if (res.status >= 400) expect(res.headers['content-type'], `problem+json: ${context}`).toMatch(/^application\/problem\+json/);
      try {
        expectContractResponse(answer as unknown as Response, req.method, req.path);
      } catch (err) {
        throw new Error(`off contract: ${context}\n${(err as Error).message}`);
      }

      const after = await digestTables(database.db, tables);
      if (res.status >= 400) expect(changedTables(digest, after), `no partial write: ${context}`).toEqual([]);
      digest = after;
      // Nothing ever lands on Object.prototype, whatever `__proto__` keys were sent.
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    const details = await fc.check(property, { numRuns: REQUESTS, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: REQUESTS > 20_000 });
    if (details.failed) throw new Error(shortReport(details));

    const summary = {
      sent: stats.sent,
      invalidByConstruction: stats.invalid,
      notBuiltYet503: stats.notBuiltYet,
      byStatus: Object.fromEntries([...stats.byStatus].sort((a, b) => a[0] - b[0])),
      byOperation: Object.fromEntries(stats.byOperation),
    };
    process.stdout.write(`fuzz summary ${JSON.stringify(summary)}\n`);
    expect(stats.sent).toBeGreaterThanOrEqual(REQUESTS);
    for (const op of operations) expect(stats.byOperation.get(op.operationId) ?? 0, op.operationId).toBeGreaterThan(0);
  });
});
