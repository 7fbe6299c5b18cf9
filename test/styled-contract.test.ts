// The contract in each key style (src/contract/styled.ts): derived by the inflector's own rule,
// served by the service, rendered per style, and what responses are checked against as they leave.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, spec, type TestDatabase } from './support/context.js';
import { styleContract, styledContracts, UnstylableContractError } from '../src/contract/styled.js';
import { responseChecker, ResponseContractError } from '../src/contract/response-validator.js';
import { indexOperations, type JsonSchema, type OpenApiDocument } from '../src/contract/spec.js';
import { INFLECTIONS, KeyInflector, hasFixedKeys } from '../src/contract/inflection.js';
import { ProblemError } from '../src/http/problem.js';
import { buildServices, createHandlers } from '../src/composition.js';
import { bundlePath, docsHtmlPath } from '../src/paths.js';

const contracts = styledContracts(spec);

/** A contract fragment with what the real one lacks today: a free-form map, digits, a nested array. */
const fragment = {
  openapi: '3.1.0',
  info: { title: 'fragment', version: '1', description: 'Pages carry `next_cursor`; filter with `status`.' },
  paths: {
    '/devices': {
      get: {
        operationId: 'listDevices',
        description: 'Pass `next_cursor` back as `cursor`.',
        parameters: [
          { $ref: '#/components/parameters/Inflection' },
          { name: 'cursor', in: 'query', schema: { type: 'string' } },
          { name: 'status', in: 'query', schema: { type: 'string' } },
        ],
        responses: {
          '200': {
            description: 'A page',
            content: {
              'application/json': {
                schema: { $ref: '#/components/schemas/Page' },
                example: { next_cursor: 'next_page', devices: [{ ip_address: '10.0.0.1', sha256_digest: 'ab_cd', labels: { build_id: 'x_y' }, status: 'in_use' }] },
              },
            },
          },
        },
      },
    },
  },
  components: {
    parameters: {
      Inflection: { name: 'x-api-inflection', in: 'header', required: false, schema: { type: 'string', enum: [...INFLECTIONS], default: 'snake' } },
    },
    schemas: {
      Device: {
        type: 'object',
        required: ['ip_address', 'sha256_digest'],
        additionalProperties: false,
        properties: {
          ip_address: { type: 'string' },
          sha256_digest: { type: 'string', description: 'Digest; see `ip_address`.' },
          status: { type: 'string', enum: ['in_use', 'spare'] },
          labels: { type: 'object', description: 'Free-form: keys are data.', additionalProperties: { type: 'string' }, example: { team_name: 'ops_team' } },
        },
      },
      Page: {
        type: 'object',
        required: ['next_cursor', 'devices'],
        properties: { next_cursor: { type: ['string', 'null'] }, devices: { type: 'array', items: { $ref: '#/components/schemas/Device' } } },
      },
    },
  },
} as unknown as OpenApiDocument;

describe('styleContract', () => {
  const camel = styleContract(fragment, 'camel');
  const pascal = styleContract(fragment, 'pascal');

  it('styles property names and required entries, recursively, and leaves $refs pointing where they did', () => {
    expect(Object.keys(camel.components.schemas.Device.properties)).toEqual(['ipAddress', 'sha256Digest', 'status', 'labels']);
    expect(camel.components.schemas.Device.required).toEqual(['ipAddress', 'sha256Digest']);
    expect(pascal.components.schemas.Page.required).toEqual(['NextCursor', 'Devices']);
    expect(pascal.components.schemas.Page.properties.Devices.items).toEqual({ $ref: '#/components/schemas/Device' });
  });

  it('styles the keys of examples as the service styles bodies: never values, never the keys of a free-form map', () => {
    const example = camel.paths['/devices']!.get!.responses['200'].content['application/json'].example;
    expect(example).toEqual({ nextCursor: 'next_page', devices: [{ ipAddress: '10.0.0.1', sha256Digest: 'ab_cd', labels: { build_id: 'x_y' }, status: 'in_use' }] });
    // The very rule of the inflector: what it answers for the snake example is the styled example.
    const snakeExample = fragment.paths['/devices']!.get!.responses['200'].content['application/json'].example;
    expect(new KeyInflector(fragment).toStyle(snakeExample, { $ref: '#/components/schemas/Page' }, 'camel')).toEqual(example);
    expect(camel.components.schemas.Device.properties.labels.example).toEqual({ team_name: 'ops_team' });
    expect(camel.components.schemas.Device.properties.status.enum).toEqual(['in_use', 'spare']);
  });

  it("writes the inflection header's value and default in the style", () => {
    for (const style of ['camel', 'dash', 'pascal'] as const) {
      const header = styleContract(fragment, style).components.parameters.Inflection;
      expect(header.schema).toEqual({ type: 'string', enum: [style], default: style });
      expect(header.required).toBe(false);
    }
    expect(styleContract(fragment, 'snake')).toBe(fragment);
  });

  it('names body keys in the style in prose, and leaves parameter names alone', () => {
    expect(camel.paths['/devices']!.get!.description).toBe('Pass `nextCursor` back as `cursor`.');
    expect(camel.components.schemas.Device.properties.sha256Digest.description).toBe('Digest; see `ipAddress`.');
    expect(pascal.info.description).toContain('Pages carry `NextCursor`; filter with `status`.');
    expect(pascal.info.description).toMatch(/^> \*\*Key style: PascalCase\.\*\*/);
  });

  it('refuses a schema keyword the inflector does not follow, and a name that would not read back', () => {
    const withPatterns = structuredClone(fragment);
    withPatterns.components.schemas.Device.patternProperties = { '^x_': { type: 'string' } };
    expect(() => styleContract(withPatterns, 'camel')).toThrow(UnstylableContractError);
    expect(() => styleContract(withPatterns, 'camel')).toThrow(/patternProperties/);
    const unreadable = structuredClone(fragment);
    unreadable.components.schemas.Device.properties.ip__address = { type: 'string' };
    expect(() => styleContract(unreadable, 'camel')).toThrow(/ip__address is ipAddress in camel, which reads back as ip_address/);
  });
});

describe('the generated contracts', () => {
  it('are exactly what the service derives and serves (generated/openapi.<style>.json)', () => {
    for (const style of INFLECTIONS) expect(JSON.parse(readFileSync(bundlePath(style), 'utf8')), style).toEqual(contracts[style]);
  });

  it('declare every property and required entry in their style', () => {
    const patterns = { camel: /^[a-z][a-zA-Z0-9]*$/, dash: /^[a-z][a-z0-9-]*$/, pascal: /^[A-Z][a-zA-Z0-9]*$/, snake: /^[a-z][a-z0-9_]*$/ };
    for (const style of INFLECTIONS) {
      const names: string[] = [];
      const walk = (node: unknown): void => {
        if (Array.isArray(node)) return node.forEach(walk);
        if (node === null || typeof node !== 'object') return;
        const object = node as JsonSchema;
        // Keys fixed by a standard (SCIM, RFC 7643/7644: `x-inflection: none`) are the same in every style.
        if (hasFixedKeys(object)) return;
        if (object.type === 'object' && object.properties) names.push(...Object.keys(object.properties), ...(object.required ?? []));
        Object.values(object).forEach(walk);
      };
      walk(contracts[style].components);
      walk(contracts[style].paths);
      expect(names.length).toBeGreaterThan(50);
      expect(names.filter((name) => !patterns[style].test(name)), style).toEqual([]);
    }
  });
});

describe('the response checker', () => {
  const checker = responseChecker(contracts);
  const listUsers = indexOperations(spec).find((op) => op.operationId === 'listUsers')!;
  const user = { id: '0b9e6a52-3c1f-4d8e-9a77-5f2c1e4b8d90', email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', status: 'active', roles: [], created_at: '2026-03-01T09:30:00.000Z', updated_at: '2026-03-01T09:30:00.000Z', last_sign_in_at: null };
  const snakePage = { data: [user], next_cursor: null };
  const inflector = new KeyInflector(spec);
  const page = { $ref: '#/components/schemas/UserPage' };

  it('checks a body against the contract of the style it is sent in', () => {
    for (const style of INFLECTIONS) {
      expect(() => checker.checkBody(listUsers, 200, inflector.toStyle(snakePage, page, style), style), style).not.toThrow();
    }
    expect(() => checker.checkBody(listUsers, 200, snakePage, 'camel')).toThrow(ResponseContractError);
    expect(() => checker.checkBody(listUsers, 200, inflector.toStyle(snakePage, page, 'camel'), 'snake')).toThrow(/next_cursor/);
    expect(() => checker.checkBody(listUsers, 201, snakePage, 'snake')).toThrow(/documents no such status/);
  });

  it('checks problem documents in their style', () => {
    const problem = { type: 'urn:problem:backoffice:x', title: 'T', status: 400, code: 'x', request_id: 'r' };
    expect(checker.problemViolation(problem, 'snake')).toBeUndefined();
    expect(checker.problemViolation(problem, 'camel')).toMatch(/requestId/);
  });
});

describe('over HTTP', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.destroy());

  it('serves each contract at /openapi.json by ?style= or by x-api-inflection, the query first, with Vary', async () => {
    const { app } = createTestApp(database.db);
    for (const style of INFLECTIONS) {
      const byQuery = await request(app).get(`/openapi.json?style=${style}`);
      expect(byQuery.status).toBe(200);
      expect(byQuery.body, style).toEqual(contracts[style]);
      expect(byQuery.headers.vary).toMatch(/x-api-inflection/i);
      expect((await request(app).get('/openapi.json').set('x-api-inflection', style)).body, style).toEqual(contracts[style]);
    }
    expect((await request(app).get('/openapi.json?style=dash').set('x-api-inflection', 'camel')).body).toEqual(contracts.dash);
    expect((await request(app).get('/openapi.json')).body).toEqual(spec);
  });

  it('answers an unknown style with 400 invalid_inflection listing the four', async () => {
    const { app } = createTestApp(database.db);
    for (const path of ['/openapi.json?style=kebab', '/docs?style=kebab']) {
      const res = await request(app).get(path);
      expect(res.status, path).toBe(400);
      expect(res.type).toBe('application/problem+json');
      expect(res.body).toMatchObject({ code: 'invalid_inflection', allowed_values: [...INFLECTIONS] });
      expect(res.body.detail).toMatch(/style query parameter/);
    }
  });

  it('serves one reference page per style at /docs?style=, each linking to the others, with the same CSP', async () => {
    const { app } = createTestApp(database.db);
    const snake = await request(app).get('/docs');
    for (const style of INFLECTIONS) {
      const res = await request(app).get(`/docs?style=${style}`);
      expect(res.status, style).toBe(200);
      expect(res.text).toBe(readFileSync(docsHtmlPath(style), 'utf8'));
      expect(res.headers['content-security-policy']).toBe(snake.headers['content-security-policy']);
      for (const other of INFLECTIONS) expect(res.text).toContain(`href="/docs?style=${other}"`);
    }
    expect((await request(app).get('/docs?style=camel')).text).toContain('nextCursor');
    expect((await request(app).get('/docs?style=pascal')).text).toContain('Key style: PascalCase');
  });

  it('answers 500 instead of a problem document its own contract does not describe', async () => {
    const { deps } = createTestApp(database.db);
    const broken = new ProblemError(400, 'validation_failed', 'bad', { errors: [{ location: 'request/body', message: 'm', hint: 'not in the contract' } as never] });
    const handlers = { ...createHandlers(buildServices(deps)), listPermissions: async () => Promise.reject(broken) };
    const { app, logs } = createTestApp(database.db, { handlers, authenticators: { apiKey: async () => ({ kind: 'api_key', apiKeyId: 'k', permissions: new Set() }), bearer: async () => Promise.reject(new Error('unused')), stepUp: async () => {} } });
    for (const style of INFLECTIONS) {
      const res = await request(app).get('/permissions').set('x-api-key', 'k').set('x-api-inflection', style);
      expect(res.status, style).toBe(500);
      expect(res.text).not.toContain('not in the contract');
    }
    expect(logs.text()).toMatch(/problem body breaks the contract/);
  });
});
