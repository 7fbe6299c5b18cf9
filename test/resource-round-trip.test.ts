// What a GET answers, a PATCH accepts, for every resource with both, read from the
// contract's own schemas: a property test builds a valid instance through the API, GETs it, sends
// back in a PATCH (with its ETag as If-Match) every field the representation does not mark
// `readOnly`, and expects 200 and no change: the same representation and the same ETag. For
// meetings: one holding its organizer and 100 people reads with 101 attendee ids, which the PATCH
// must take back (maxItems 101). Also: an id in capitals finds the resource (RFC 9562: UUIDs are
// case-insensitive on input, lower case on output).
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, type createTestApp } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { adminRoleId, createAppWithTestBearer, makeRole, makeUser, testBearer } from './support/access-fixtures.js';
import { loadSpec, deref, type JsonSchema } from '../src/contract/spec.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { startHandMadeProvider, type HandMadeProvider } from './support/oidc.js';

type App = ReturnType<typeof createTestApp>['app'];
type Body = Record<string, unknown>;

const spec = loadSpec();
let database: TestDatabase;
let app: App;
let key: Record<string, string>;
/** Active people to name as assignees, organizers and attendees (101: an organizer and 100 more). */
let people: string[] = [];
let roleNames: string[] = [];
/** An OpenID Provider on loopback that identity providers discover (test/support/oidc.ts). */
let openIdProvider: HandMadeProvider;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = createAppWithTestBearer(database.db));
  // An administrator signed in (API keys are managed by signed-in people only).
  key = { authorization: testBearer((await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] })).id) };
  for (let i = 0; i < 101; i++) people.push((await makeUser(database.db)).id);
  people = people.sort();
  roleNames = [(await makeRole(database.db, ['tasks.list', 'tasks.read'])).name, (await makeRole(database.db, ['meetings.list'])).name];
  openIdProvider = await startHandMadeProvider();
});
afterAll(async () => {
  await openIdProvider?.close();
  await database.destroy();
});

async function send(method: 'get' | 'post' | 'patch', path: string, body?: object, headers: Record<string, string> = {}) {
  let req = request(app)[method](path).set(key).set(headers);
  if (body !== undefined) req = req.send(body);
  const res = await req;
  expectContractResponse(res, method, path);
  return res;
}

/** The schema of an operation's JSON body (request, or a response by status), from the bundled contract. */
function schemaOf(path: string, method: string, where: 'request' | '200'): JsonSchema {
  const operation = (spec.paths as Record<string, Record<string, Body>>)[path]![method]!;
  const content = where === 'request' ? (deref(spec, operation.requestBody as JsonSchema) as Body).content : (deref(spec, (operation.responses as Record<string, JsonSchema>)[where]) as Body).content;
  return deref(spec, (content as Record<string, { schema: JsonSchema }>)['application/json']!.schema)!;
}

/** The fields of a representation a client may send back: those its schema does not mark readOnly. */
function writableFields(representation: JsonSchema): string[] {
  const properties = representation.properties as Record<string, JsonSchema>;
  return Object.keys(properties).filter((name) => !(properties[name]!.readOnly === true || deref(spec, properties[name])?.readOnly === true));
}

/** The id of what a create answered (a key's comes with its secret, under `api_key`; an endpoint's under `webhook_endpoint`). */
const idOf = (body: Body) => ((body.api_key as Body | undefined)?.id ?? (body.webhook_endpoint as Body | undefined)?.id ?? body.id) as string;
const EVENT_TYPES = (deref(spec, { $ref: '#/components/schemas/EventType' }) as { enum: string[] }).enum;

const future = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
const text = (max: number) => fc.string({ unit: fc.constantFrom(...'abcdefghij XYZéü-'), minLength: 1, maxLength: max }).map((s) => `${s.trim() || 'x'}`);
const someOf = <T,>(items: readonly T[], max = items.length) => fc.subarray([...items], { minLength: 1, maxLength: max });

/** Each resource with a GET and a PATCH on /<things>/{id}: how to make a valid instance of it, varied. */
const RESOURCES: { name: string; collection: string; create: () => fc.Arbitrary<Body> }[] = [
  {
    name: 'user',
    collection: '/users',
    create: () => fc.record({ first_name: text(40), last_name: text(40), roles: fc.subarray(roleNames) }).map((u) => ({ ...u, email: `rt-${randomUUID().slice(0, 8)}@example.com` })),
  },
  {
    name: 'role',
    collection: '/roles',
    create: () => fc.record({ description: text(100), permissions: someOf(PERMISSIONS) }).map((r) => ({ ...r, name: `rt-${randomUUID().slice(0, 8)}` })),
  },
  {
    name: 'API key',
    collection: '/api-keys',
    create: () =>
      fc
        .record({
          permissions: someOf(PERMISSIONS, 6),
          expires_at: fc.option(fc.integer({ min: 1, max: 365 }).map(future), { nil: undefined }),
          rate_limit: fc.option(fc.record({ requests: fc.integer({ min: 1, max: 1000 }), per_seconds: fc.integer({ min: 1, max: 3600 }) }), { nil: undefined }),
          allowed_ips: fc.option(fc.constantFrom(['203.0.113.0/24'], ['198.51.100.7', '2001:db8::/32']), { nil: undefined }),
        })
        .map((k) => ({ ...k, name: `rt-${randomUUID().slice(0, 8)}` })),
  },
  {
    name: 'task',
    collection: '/tasks',
    create: () =>
      fc.record({
        title: text(200),
        description: fc.option(text(300), { nil: null }),
        status: fc.constantFrom('todo', 'in_progress', 'done', 'cancelled'),
        priority: fc.constantFrom('low', 'normal', 'high', 'urgent'),
        due_at: fc.option(fc.integer({ min: 1, max: 365 }).map(future), { nil: null }),
        assignee_id: fc.option(fc.constantFrom(...people), { nil: null }),
      }),
  },
  {
    name: 'meeting',
    collection: '/meetings',
    create: () =>
      fc
        .record({
          title: text(200),
          description: fc.option(text(300), { nil: null }),
          location: fc.option(text(100), { nil: null }),
          status: fc.constantFrom('scheduled', 'cancelled'),
          minutes: fc.integer({ min: 1, max: 24 * 60 }),
          organizer: fc.integer({ min: 0, max: 100 }),
          // As many people as a meeting may invite besides its organizer, often the most.
          attendees: fc.oneof(fc.constant(100), fc.integer({ min: 0, max: 100 })),
        })
        .map(({ minutes, organizer, attendees, ...m }) => {
          const startsAt = new Date(Date.UTC(2027, 0, 1 + organizer, 9));
          const organizerId = people[organizer]!;
          return {
            ...m,
            starts_at: startsAt.toISOString(),
            ends_at: new Date(startsAt.getTime() + minutes * 60_000).toISOString(),
            organizer_id: organizerId,
            attendee_ids: people.filter((id) => id !== organizerId).slice(0, attendees),
          };
        }),
  },
  {
    name: 'webhook endpoint',
    collection: '/webhook-endpoints',
    create: () =>
      fc.record({
        // Public addresses written as literals: saving one resolves nothing.
        url: fc.constantFrom('https://8.8.8.8/hooks', 'https://[2606:4700::1111]/partner/events'),
        description: fc.option(text(300), { nil: null }),
        event_types: someOf(EVENT_TYPES, 10),
        key_style: fc.constantFrom('snake', 'camel', 'dash', 'pascal'),
        enabled: fc.boolean(),
      }),
  },
  {
    name: 'identity provider',
    collection: '/identity-providers',
    create: () =>
      fc
        .record({
          groups: fc.subarray(['staff', 'planners']),
          create_unknown_people: fc.boolean(),
          sso_required: fc.boolean(),
          second_factor_amr: fc.subarray(['mfa', 'hwk', 'otp']),
          second_factor_acr: fc.subarray(['urn:example:mfa']),
          scopes: fc.constantFrom(['openid', 'email', 'profile'], ['openid', 'email', 'groups']),
        })
        .map(({ groups, ...p }) => {
          const unique = randomUUID().slice(0, 8);
          return {
            ...p,
            name: `rt-${unique}`,
            issuer: openIdProvider.issuer,
            client_id: openIdProvider.clientId,
            client_secret: openIdProvider.clientSecret,
            domains: [`rt-${unique}.example`, `rt-${unique}.example.org`],
            role_mappings: groups.map((group, i) => ({ group, roles: [roleNames[i % roleNames.length]!] })),
          };
        }),
  },
];

describe('what a GET answers, a PATCH accepts', () => {
  it.each(RESOURCES)('$name: every field not marked readOnly is accepted back as read, and changes nothing', async ({ collection, create }) => {
    const item = `${collection}/{id}`;
    const writable = writableFields(schemaOf(item, 'get', '200'));
    const patchable = Object.keys(schemaOf(item, 'patch', 'request').properties as Body);
    // The contract says it: what is not readOnly in the representation, the PATCH takes.
    expect(writable.filter((field) => !patchable.includes(field))).toEqual([]);
    await fc.assert(
      fc.asyncProperty(create(), async (body) => {
        const created = await send('post', collection, body);
        expect(created.status, created.text).toBe(201);
        const path = `${collection}/${idOf(created.body as Body)}`;
        const read = await send('get', path);
        expect(read.status, read.text).toBe(200);
        const sentBack = Object.fromEntries(writable.map((field) => [field, (read.body as Body)[field]]));
        expect(read.headers.etag, 'every resource answers an ETag').toBeTruthy();
        const patched = await send('patch', path, sentBack, { 'If-Match': read.headers.etag as string });
        expect(patched.status, patched.text).toBe(200);
        const again = await send('get', path);
        expect(again.body).toEqual(read.body);
        expect(again.headers.etag).toBe(read.headers.etag);
      }),
      { numRuns: 4, endOnFailure: true },
    );
  });
});

describe('ids are case-insensitive on input and lower case on output (RFC 9562)', () => {
  it.each(RESOURCES)('$name: the id in capitals finds it, and is answered in lower case', async ({ collection, create }) => {
    const body = fc.sample(create(), { numRuns: 1, seed: 34 })[0]!;
    const created = await send('post', collection, body);
    expect(created.status, created.text).toBe(201);
    const id = idOf(created.body as Body);
    const read = await send('get', `${collection}/${id.toUpperCase()}`);
    expect(read.status, read.text).toBe(200);
    expect((read.body as Body).id).toBe(id);
  });
});
