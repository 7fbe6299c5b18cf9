// The contract is what is served: every operation has a handler and a route, nothing else is
// routed, and a secured operation without a declared permission stops the server (fail closed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { deref, indexOperations, MissingPermissionDeclarationError, type JsonSchema } from '../src/contract/spec.js';
import { buildServices, createHandlers } from '../src/composition.js';
import { createTestApp, createTestDatabase, spec, type TestDatabase } from './support/context.js';
import { assertContractLoads } from '../src/contract/validator.js';
import { requiredQuery } from './support/contract.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const operations = indexOperations(spec);

describe('the contract is what is served', () => {
  it('has exactly one handler per operationId, an alias (x-path-aliases) served by its original\'s', () => {
    const { deps } = createTestApp(database.db);
    const handlerIds = Object.keys(createHandlers(buildServices(deps))).sort();
    const originals = operations.filter((op) => op.raw['x-alias-of'] === undefined);
    expect(handlerIds).toEqual(originals.map((op) => op.operationId).sort());
    for (const alias of operations.filter((op) => op.raw['x-alias-of'] !== undefined)) expect(handlerIds).toContain(alias.raw['x-alias-of']);
  });

  it.each(operations.map((op) => [op.method.toUpperCase(), op.path, op] as const))('%s %s is routed to its handler', async (method, path, op) => {
    // Each handler is replaced by a marker, so the answer proves the route reached this operation's handler.
    const { deps } = createTestApp(database.db);
    const handlers = Object.fromEntries(
      Object.keys(createHandlers(buildServices(deps))).map((id) => [id, async () => { throw Object.assign(new Error(id), { marker: id }); }]),
    ) as unknown as ReturnType<typeof createHandlers>;
    const principal = { kind: 'api_key' as const, apiKeyId: 'k', permissions: new Set([op.requiredPermission ?? '']) };
    const { app, logs } = createTestApp(database.db, {
      handlers,
      authenticators: { apiKey: async () => principal, bearer: async () => ({ ...principal, kind: 'user', userId: 'u', sessionId: 's' }), stepUp: async () => {} },
    });
    const concretePath = `${path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000')}${requiredQuery(op)}`;
    let req = request(app)[op.method](concretePath);
    if (op.security.includes('bearerAuth')) req = req.set('authorization', 'Bearer t');
    else if (op.security.includes('apiKey')) req = req.set('x-api-key', 'k');
    if (op.requestBodySchema) req = req.set('content-type', 'application/json').send(JSON.stringify(exampleBody(op.raw)));
    const res = await req;
    // The marker error becomes a 500 logged with the operationId of the handler that ran. (Operations
    // authenticated by their own handler may answer before it runs; their route is still proven by a non-404/405.)
    expect([404, 405]).not.toContain(res.status);
    if (op.raw['x-authenticated-by'] !== 'handler') {
      expect(res.status, JSON.stringify(res.body)).toBe(500);
      expect(logs.text()).toContain(`"message":"${(op.raw['x-alias-of'] as string | undefined) ?? op.operationId}"`);
    }
  });

  it('routes nothing outside the contract', async () => {
    const { app } = createTestApp(database.db);
    for (const path of ['/sessions/x/y', '/user', '/users.json', '/api/users', '/tokens/refresh']) {
      const res = await request(app).get(path);
      expect(res.status, path).toBe(404);
    }
  });
});

function exampleBody(op: Record<string, unknown>): unknown {
  const body = (deref(spec, op.requestBody as JsonSchema) as { content?: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }> }> } | undefined)?.content?.['application/json'];
  // One example, or several named ones (a step-up by code, by password...): the first.
  const example = body?.example ?? Object.values(body?.examples ?? {})[0]?.value;
  if (example !== undefined) return example;
  throw new Error('every request body in the contract has an example');
}

describe('fail closed on undeclared permissions', () => {
  it('refuses a contract whose secured operation declares no x-required-permission', () => {
    const broken = structuredClone(spec);
    const users = broken.paths['/users'] as Record<string, Record<string, unknown>>;
    delete users.get!['x-required-permission'];
    expect(() => indexOperations(broken)).toThrow(MissingPermissionDeclarationError);
  });
});

describe('where the contract says it is served', () => {
  it('names a configurable production address over TLS only, never plain HTTP, and the service sends HSTS', async () => {
    const servers = spec.servers as { url: string; description: string; variables?: Record<string, { default: string }> }[];
    expect(servers.length).toBeGreaterThan(0);
    for (const server of servers) {
      expect(server.url).toMatch(/^https:\/\/\{host\}/);
      expect(server.variables?.host?.default).toEqual(expect.any(String));
      expect(server.description).toMatch(/TLS only/);
    }
    const { app } = createTestApp(database.db);
    expect((await request(app).get('/livez')).headers['strict-transport-security']).toMatch(/max-age=\d{8}/);
  });
});

describe('a broken contract stops the service at start-up', () => {
  it('refuses a contract whose reference leads nowhere, and accepts the real one', async () => {
    const broken = structuredClone(spec) as unknown as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    broken.paths['/users']!.get!.responses['200'] = { $ref: '#/components/responses/NoSuchResponse' };
    await expect(assertContractLoads(broken as unknown as typeof spec)).rejects.toThrow(/NoSuchResponse|resolve|\$ref/i);
    await expect(assertContractLoads(spec)).resolves.toBeUndefined();
  });
});
