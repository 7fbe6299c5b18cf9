// x-api-inflection: one canonical snake_case body, four key styles, keys only, never values or
// the keys of free-form maps; request bodies accepted in the chosen style.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { KeyInflector, parseInflection } from '../src/http/inflection.js';
import type { OpenApiDocument } from '../src/contract/spec.js';
import { ProblemError } from '../src/http/problem.js';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createHandlers } from '../src/handlers/index.js';
import { buildServices } from '../src/services.js';

// A contract fragment with nested arrays, an acronym (ip), digits (sha256, ipv4) and a free-form map.
const spec = {
  openapi: '3.1.0',
  paths: {},
  components: {
    schemas: {
      Device: {
        type: 'object',
        properties: {
          ip_address: { type: 'string' },
          sha256_digest: { type: 'string' },
          last_seen_ipv4: { type: 'string' },
          tags: { type: 'array', items: { type: 'string' } },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
      Page: {
        type: 'object',
        properties: {
          next_cursor: { type: ['string', 'null'] },
          device_groups: { type: 'array', items: { type: 'array', items: { $ref: '#/components/schemas/Device' } } },
        },
      },
    },
  },
} as unknown as OpenApiDocument;
const pageSchema = { $ref: '#/components/schemas/Page' };

const canonical = {
  next_cursor: 'snake_case_value',
  device_groups: [
    [
      {
        ip_address: '10.0.0.1',
        sha256_digest: 'ab_cd',
        last_seen_ipv4: '10.0.0.2',
        tags: ['first_tag', 'Second_Tag'],
        labels: { build_id: 'x_y', 'Team-Name': 'ops_team' },
      },
    ],
  ],
};

const expected = {
  camel: {
    nextCursor: 'snake_case_value',
    deviceGroups: [[{ ipAddress: '10.0.0.1', sha256Digest: 'ab_cd', lastSeenIpv4: '10.0.0.2', tags: ['first_tag', 'Second_Tag'], labels: { build_id: 'x_y', 'Team-Name': 'ops_team' } }]],
  },
  dash: {
    'next-cursor': 'snake_case_value',
    'device-groups': [[{ 'ip-address': '10.0.0.1', 'sha256-digest': 'ab_cd', 'last-seen-ipv4': '10.0.0.2', tags: ['first_tag', 'Second_Tag'], labels: { build_id: 'x_y', 'Team-Name': 'ops_team' } }]],
  },
  pascal: {
    NextCursor: 'snake_case_value',
    DeviceGroups: [[{ IpAddress: '10.0.0.1', Sha256Digest: 'ab_cd', LastSeenIpv4: '10.0.0.2', Tags: ['first_tag', 'Second_Tag'], Labels: { build_id: 'x_y', 'Team-Name': 'ops_team' } }]],
  },
  snake: canonical,
} as const;

describe('KeyInflector', () => {
  const inflector = new KeyInflector(spec);

  for (const style of ['camel', 'dash', 'pascal', 'snake'] as const) {
    it(`renders the same body in ${style}: nested arrays, acronyms, digits; values and map keys untouched`, () => {
      expect(inflector.toStyle(canonical, pageSchema, style)).toEqual(expected[style]);
    });

    it(`reads a ${style} body back to the canonical snake_case body`, () => {
      expect(inflector.toSnake(expected[style], pageSchema, style)).toEqual(canonical);
    });
  }

  it('inflects every key when a body has no schema', () => {
    expect(inflector.toStyle({ some_key: [{ inner_key: 1 }] }, undefined, 'camel')).toEqual({ someKey: [{ innerKey: 1 }] });
  });
});

describe('parseInflection', () => {
  it('defaults to snake and accepts the four styles in any letter case', () => {
    expect(parseInflection(undefined)).toBe('snake');
    expect(parseInflection('CAMEL')).toBe('camel');
    expect(parseInflection(' pascal ')).toBe('pascal');
  });

  it('refuses an unknown style with 400 invalid_inflection listing the allowed values', () => {
    const attempt = () => parseInflection('kebab');
    expect(attempt).toThrow(ProblemError);
    try {
      attempt();
    } catch (err) {
      const problem = (err as ProblemError).toProblem('r1');
      expect(problem.status).toBe(400);
      expect(problem.code).toBe('invalid_inflection');
      expect(problem.allowed_values).toEqual(['camel', 'dash', 'snake', 'pascal']);
    }
  });
});

describe('x-api-inflection over HTTP', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.destroy());

  it('inflects error bodies, nested arrays included, and says Vary: x-api-inflection', async () => {
    const { app } = createTestApp(database.db);
    const send = (style?: string) => {
      const req = request(app).post('/sessions').send({ session: { email: 'a@b.co', password: 5 } });
      return style ? req.set('x-api-inflection', style) : req;
    };
    const snake = await send();
    expect(snake.headers.vary).toMatch(/x-api-inflection/i);
    expect(snake.body).toMatchObject({ request_id: expect.any(String), errors: [{ location: 'request/body/session/password', error_code: 'type' }] });
    const camel = await send('camel');
    expect(camel.body).toMatchObject({ requestId: expect.any(String), errors: [{ location: 'request/body/session/password', errorCode: 'type' }] });
    const dash = await send('dash');
    expect(dash.body).toMatchObject({ 'request-id': expect.any(String), errors: [{ location: 'request/body/session/password', 'error-code': 'type' }] });
    const pascal = await send('pascal');
    expect(pascal.body).toMatchObject({ RequestId: expect.any(String), Errors: [{ Location: 'request/body/session/password', ErrorCode: 'type' }] });
    expect(pascal.headers.vary).toMatch(/x-api-inflection/i);
  });

  it('answers an unknown style with 400 listing the allowed values, in snake_case', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).get('/users').set('x-api-inflection', 'screaming');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_inflection', allowed_values: ['camel', 'dash', 'snake', 'pascal'] });
  });

  it('accepts request bodies written in the chosen style', async () => {
    const { app } = createTestApp(database.db);
    // camelCase refreshToken is normalised to refresh_token and passes validation (the 401 comes
    // from the made-up bearer token, after validation).
    const camel = await request(app).post('/tokens').set('authorization', 'Bearer x').set('x-api-inflection', 'camel').send({ refreshToken: 'bor_x' });
    expect(camel.status).toBe(401);
    // Without the header, the same body is not snake_case and fails validation.
    const plain = await request(app).post('/tokens').set('authorization', 'Bearer x').send({ refreshToken: 'bor_x' });
    expect(plain.status).toBe(400);
    const locations = plain.body.errors.map((e: { location: string }) => e.location);
    expect(locations).toEqual(expect.arrayContaining(['request/body/refresh_token', 'request/body/refreshToken']));
  });
});

describe('response validation sees the body that leaves', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.destroy());

  const principal = { kind: 'api_key' as const, apiKeyId: 'k', permissions: new Set(['users.list']) };
  const authenticators = { apiKey: async () => principal, bearer: async () => principal };
  const user = {
    id: '0b9e6a52-3c1f-4d8e-9a77-5f2c1e4b8d90',
    email: 'ada@example.com',
    first_name: 'Ada',
    last_name: 'Lovelace',
    status: 'active' as const,
    roles: ['admin'],
    created_at: '2026-03-01T09:30:00.000Z',
    updated_at: '2026-03-01T09:30:00.000Z',
    last_sign_in_at: null,
  };

  it('validates the camelCase body against the camelCase contract (a camel response passes validation)', async () => {
    const { deps } = createTestApp(database.db, { authenticators });
    const handlers = { ...createHandlers(buildServices(deps)), listUsers: async () => ({ status: 200 as const, body: { data: [user], next_cursor: null } }) };
    const { app } = createTestApp(database.db, { authenticators, handlers });
    const res = await request(app).get('/users').set('x-api-key', 'k').set('x-api-inflection', 'camel');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [{ ...toCamel(user) }], nextCursor: null });
  });

  it('turns a handler body that breaks the contract into a 500 (validation is on in tests)', async () => {
    const { deps } = createTestApp(database.db, { authenticators });
    const broken = { ...user, password_hash: 'leak' };
    const handlers = { ...createHandlers(buildServices(deps)), listUsers: async () => ({ status: 200 as const, body: { data: [broken], next_cursor: null } }) };
    const { app } = createTestApp(database.db, { authenticators, handlers });
    const res = await request(app).get('/users').set('x-api-key', 'k');
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('leak');
  });
});

function toCamel(user: Record<string, unknown>) {
  return Object.fromEntries(Object.entries(user).map(([k, v]) => [k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()), v]));
}
