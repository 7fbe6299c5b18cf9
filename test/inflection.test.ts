// x-api-inflection: one canonical snake_case body, four key styles, keys only, never values or
// the keys of free-form maps; request bodies accepted in the chosen style.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { KeyInflector } from '../src/contract/inflection.js';
import { parseInflection } from '../src/http/inflection.js';
import { firstRepeatedKey } from '../src/http/inflection-middleware.js';
import type { OpenApiDocument } from '../src/contract/spec.js';
import { ProblemError } from '../src/http/problem.js';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { buildServices, createHandlers } from '../src/composition.js';
import { makeApiKey, makeRole } from './support/access-fixtures.js';
import { expectContractResponse } from './support/contract.js';

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

describe('firstRepeatedKey', () => {
  it('finds a member name given twice in one object, however it is escaped or deep, and nothing else', () => {
    expect(firstRepeatedKey(String.raw`{"a":1,"b":{"c":[{"d":1},{"d":1,"\u0064":2}]}}`)).toEqual(['b', 'c', 1, 'd']);
    expect(firstRepeatedKey('{"a":"a","b":["a","a"],"c":{"a":1}}')).toBeUndefined();
    expect(firstRepeatedKey(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`)).toBeUndefined();
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
    expect(pascal.body).toMatchObject({ RequestId: expect.any(String), Errors: [{ Location: 'request/body/Session/Password', ErrorCode: 'type' }] });
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

describe('body tricks under inflection', () => {
  let database: TestDatabase;
  let key: string;
  let role: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    // The key may grant the role: only validation stands between a smuggled field and the database.
    role = (await makeRole(database.db, ['users.list'], 'Smuggled')).name;
    key = (await makeApiKey(database.db, ['users.create', 'users.list', 'users.read'])).secret;
  });
  afterAll(() => database.destroy());

  const STYLES = ['snake', 'camel', 'dash', 'pascal'] as const;
  const userBody = (style: (typeof STYLES)[number], email: string) => {
    const names = { snake: ['first_name', 'last_name'], camel: ['firstName', 'lastName'], dash: ['first-name', 'last-name'], pascal: ['FirstName', 'LastName'] }[style];
    const emailKey = style === 'pascal' ? 'Email' : 'email';
    return { [emailKey]: email, [names[0]!]: 'Eve', [names[1]!]: 'Mallory' };
  };
  const createUser = (style: string, raw: string) =>
    request(app())
      .post('/users')
      .set('x-api-key', key)
      .set('x-api-inflection', style)
      .set('content-type', 'application/json')
      .send(raw);
  const app = () => createTestApp(database.db).app;
  const fieldErrors = (body: Record<string, unknown>) => (body.errors ?? body.Errors) as Record<string, string>[];
  const userExists = async (email: string) => (await database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()) !== undefined;

  for (const style of STYLES) {
    it(`a __proto__, constructor or prototype key cannot smuggle roles into a new user (${style})`, async () => {
      for (const name of ['__proto__', 'constructor', 'prototype']) {
        const email = `smuggler-${name.replace(/_/g, '')}-${style}@example.com`;
        // Written as text: an object literal's __proto__ would not be serialised as a key.
        const raw = `${JSON.stringify(userBody(style, email)).slice(0, -1)},"${name}":{"roles":["${role}"]}}`;
        const res = await createUser(style, raw);
        expect(res.status, `${style} ${name}`).toBe(400);
        if (style === 'snake') expectContractResponse(res, 'POST', '/users');
        expect(fieldErrors(res.body)[0]).toEqual(expect.objectContaining({ [style === 'pascal' ? 'Location' : 'location']: `request/body/${name}` }));
        expect(await userExists(email), `${style} ${name}`).toBe(false);
      }
    });

    it(`two keys naming the same field are refused, not one silently kept (${style})`, async () => {
      const email = `twice-${style}@example.com`;
      const fields = userBody(style, email);
      const text = JSON.stringify(fields).slice(0, -1);
      // The same name twice in the JSON text, and (outside snake) two spellings of one field.
      const sameName = `${text},"${Object.keys(fields)[1]}":"Bob"}`;
      const spellings = style === 'snake' ? [sameName] : [sameName, `${text},"first_name":"Bob"}`];
      const location = { snake: 'request/body/first_name', camel: 'request/body/firstName', dash: 'request/body/first-name', pascal: 'request/body/FirstName' }[style];
      for (const raw of spellings) {
        const res = await createUser(style, raw);
        expect(res.status, raw).toBe(400);
        if (style === 'snake') expectContractResponse(res, 'POST', '/users');
        expect(fieldErrors(res.body)[0], raw).toEqual(expect.objectContaining({ [style === 'pascal' ? 'Location' : 'location']: location }));
        expect(JSON.stringify(res.body)).toContain('duplicate_key');
        expect(await userExists(email)).toBe(false);
      }
    });
  }

  it('every invalid inflection value gets the same 400 invalid_inflection listing the four', async () => {
    for (const value of ['Kebab', '', 'camel2', 'snake, camel', 'CAMEL_CASE']) {
      const res = await request(app()).get('/users').set('x-api-key', key).set('x-api-inflection', value);
      expect(res.status, JSON.stringify(value)).toBe(400);
      expect(res.body, JSON.stringify(value)).toMatchObject({ code: 'invalid_inflection', allowed_values: ['camel', 'dash', 'snake', 'pascal'] });
    }
    // The four values are read in any letter case, as the contract's description says.
    const upper = await request(app()).get('/users').set('x-api-key', key).set('x-api-inflection', 'CAMEL');
    expect(upper.status).toBe(200);
    expect(upper.body).toHaveProperty('nextCursor');
  });

  it('error locations, the properties messages quote and the detail follow the chosen style', async () => {
    const refresh = (style: string, body: object) =>
      request(app()).post('/tokens').set('authorization', 'Bearer x').set('x-api-inflection', style).send(body);
    const camel = await refresh('camel', {});
    expect(camel.status).toBe(400);
    expect(camel.body.errors).toEqual([{ location: 'request/body/refreshToken', message: "must have required property 'refreshToken'", errorCode: 'required' }]);
    expect(camel.body.detail).toBe("request/body/refreshToken must have required property 'refreshToken'");
    const pascal = await refresh('pascal', { RefreshToken: 5 });
    expect(pascal.body.Errors).toEqual([expect.objectContaining({ Location: 'request/body/RefreshToken', ErrorCode: 'type' })]);
    const dash = await refresh('dash', { 'refresh-token': 5 });
    expect(dash.body.errors).toEqual([expect.objectContaining({ location: 'request/body/refresh-token', 'error-code': 'type' })]);
    const snake = await refresh('snake', { refresh_token: 5 });
    expect(snake.body.errors).toEqual([expect.objectContaining({ location: 'request/body/refresh_token', error_code: 'type' })]);
  });
});

describe('response validation sees the body that leaves', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.destroy());

  const principal = { kind: 'api_key' as const, apiKeyId: 'k', permissions: new Set(['users.list']) };
  const authenticators = { apiKey: async () => principal, bearer: async () => principal, stepUp: async () => {} };
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
