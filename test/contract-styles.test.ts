// What a partner sees through Prism's validation proxy (`prism proxy --errors`), in each key style:
// the contract of that style (generated/openapi.<style>.json) in front of the real service (a
// server process on real PostgreSQL), and every operation of the contract driven through it with
// that style's header and request bodies: its success, an unknown query parameter (400 with
// errors[]), a refused credential (401), a caller without the permission (403) and an unknown id
// (404), wherever the operation documents them. Prism must report no violation at all.
//
// The operations come from the contract: a new one is driven as soon as it is there, or this file
// fails asking for a fixture (a path parameter it cannot fill, a request body without an example).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, spec, type TestDatabase } from './support/context.js';
import { requiredQuery } from './support/contract.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { startValidationProxy, type PrismProcess } from './support/prism.js';
import { adminRoleId, makeApiKey, makeIdentityProvider, makePasskey, makeRole, makeUser, makeWebhookDelivery, makeWebhookEndpoint } from './support/access-fixtures.js';
import { SoftAuthenticator } from './support/passkey.js';
import { startHandMadeProvider, type HandMadeProvider } from './support/oidc.js';
import { deref, indexOperations, type OpenApiDocument, type OperationInfo } from '../src/contract/spec.js';
import { aliasOperations } from '../src/contract/path-aliases.js';
import { featureFixtures, featurePreparations } from './fixtures/index.js';
import { INFLECTIONS, styleKey, type Inflection } from '../src/contract/inflection.js';
import { hashPassword } from '../src/auth/secrets/passwords.js';
import { bundlePath } from '../src/paths.js';

const operations = indexOperations(spec);
const PASSWORD = 'styles passphrase 1234';

let database: TestDatabase;
let server: ServerProcess;
let passwordHash: string;
let adminRole: string;
/** An OpenID Provider on loopback for identity providers to discover (test/support/oidc.ts). */
let openIdProvider: HandMadeProvider;

/** One proxy per style, all started at once (Prism takes seconds to start), each used in turn. */
const proxies = new Map<Inflection, Promise<PrismProcess>>();

beforeAll(async () => {
  database = await createTestDatabase();
  passwordHash = await hashPassword(PASSWORD);
  adminRole = await adminRoleId(database.db);
  // Signing in with a provider starts for the fixtures' e-mails (example.com); the flow's end needs a real sign-in there (test/oidc-sign-in.test.ts).
  openIdProvider = await startHandMadeProvider();
  await makeIdentityProvider(database.db, openIdProvider.issuer, ['example.com']);
  // Real processes all the way: the service as deployed (response validation on, as outside production).
  // Webhook URLs on loopback: this file is about the contract, not about where a URL points.
  server = await startServerProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', SWEEP_INTERVAL_S: '0', WEBHOOKS_ALLOW_PRIVATE_URLS: 'true' });
  for (const style of INFLECTIONS) proxies.set(style, startValidationProxy(style, server.url));
  // Rejections are seen by the describe block that awaits its proxy.
  for (const proxy of proxies.values()) proxy.catch(() => {});
});

afterAll(async () => {
  await Promise.allSettled([...proxies.values()].map(async (proxy) => (await proxy).stop()));
  await server?.stop();
  await openIdProvider?.close();
  await database?.destroy();
});

/** A user signed in for real, straight at the service (fixtures do not go through Prism). */
const operationPaths = new Map(indexOperations(spec).map((op) => [op.operationId, op.path]));
const aliasOf = aliasOperations(spec);
/** The path that names the resource: an alias's original's (`/taches/{id}` is a task). */
const resourcePathOf = (op: OperationInfo) => operationPaths.get(aliasOf.get(op.operationId) ?? op.operationId) ?? op.path;
/** What a caller does before a feature's operation can succeed (test/fixtures/<name>.ts). */
const FEATURE_PREPARATIONS = await featurePreparations();

interface Caller {
  userId: string;
  email: string;
  sessionId: string;
  accessToken: string;
  refreshToken: string;
}

async function signedIn(roleIds: string[]): Promise<Caller> {
  const user = await makeUser(database.db, { roleIds, passwordHash });
  const res = await fetch(`${server.url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ session: { email: user.email, password: PASSWORD } }),
  });
  const body = (await res.json()) as { access_token: string; refresh_token: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  const session = await database.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).executeTakeFirstOrThrow();
  return { userId: user.id, email: user.email, sessionId: session.id, accessToken: body.access_token, refreshToken: body.refresh_token };
}

/** The caller's session steps up with the password (docs/AUTH.md, "Step-up"), for the sensitive changes (`x-step-up`). */
async function steppedUp(caller: Caller): Promise<Caller> {
  const res = await fetch(`${server.url}/sessions/current/step-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.accessToken}` },
    body: JSON.stringify({ password: PASSWORD }),
  });
  expect(res.status, await res.text()).toBe(200);
  return caller;
}

/** A fresh resource for a path parameter, by the path's first segment. */
// The platform's below; each feature's from test/fixtures/<segment>.ts (a French path takes its original's).
const RESOURCES: Record<string, () => Promise<string>> = {
  ...Object.fromEntries(Object.entries(await featureFixtures()).map(([segment, make]) => [segment, () => make(database.db)])),
  users: async () => (await makeUser(database.db)).id,
  roles: async () => (await makeRole(database.db, ['tasks.list'])).id,
  'api-keys': async () => (await makeApiKey(database.db, ['tasks.list'])).id,
  'webhook-endpoints': async () => (await makeWebhookEndpoint(database.db)).id,
  'identity-providers': () => makeIdentityProvider(database.db, openIdProvider.issuer),
  // SCIM's /scim/v2/Users/{id}: a person holding nothing (a provisioning key sees only people it outranks).
  scim: async () => {
    const user = await makeUser(database.db);
    scimEmails.set(user.id, user.email);
    return user.id;
  },
  // SCIM's /scim/v2/Groups/{id}: a role granting nothing (a provisioning key sees the roles it may grant).
  'scim-groups': async () => {
    const role = await makeRole(database.db, []);
    scimGroupNames.set(role.id, role.name);
    return role.id;
  },
};

/** The name of each role made for a SCIM Groups path: a group's PUT sends its displayName back unchanged. */
const scimGroupNames = new Map<string, string>();

/** The e-mail of each person made for a SCIM path: a SCIM PUT sends the person's userName back unchanged. */
const scimEmails = new Map<string, string>();


/** The path of a success case: real resources (sessions exist only by signing in). */
async function successPath(op: OperationInfo, caller: Caller | undefined): Promise<string> {
  if (op.path === '/sessions/{id}') return `/sessions/${caller!.sessionId}`;
  // A passkey exists only as someone's: the caller's own; once it has one, only a second factor
  // is a fresh proof (test/step-up.test.ts), as the session then holds (here written straight).
  if (op.path === '/me/passkeys/{id}') {
    const passkeyId = await makePasskey(database.db, caller!.userId);
    await database.db.updateTable('sessions').set({ stepped_up_at: new Date(), step_up_method: 'recovery_code' }).where('id', '=', caller!.sessionId).execute();
    return `/me/passkeys/${passkeyId}`;
  }
  if (op.path.includes('{delivery_id}')) {
    const { endpointId, deliveryId } = await makeWebhookDelivery(database.db);
    return op.path.replace('{id}', endpointId).replace('{delivery_id}', deliveryId);
  }
  if (op.path.includes('{session_id}')) {
    const other = await signedIn([]);
    return op.path.replace('{id}', other.userId).replace('{session_id}', other.sessionId);
  }
  let path = op.path;
  for (const [placeholder] of op.path.matchAll(/\{[^}]+\}/g)) {
    const segment = op.path.startsWith('/scim/v2/Groups/') ? 'scim-groups' : (resourcePathOf(op).split('/')[1] ?? '');
    const make = RESOURCES[segment];
    if (!make) throw new Error(`No fixture for ${placeholder} in ${op.path}: add test/fixtures/${segment}.ts (see test/fixtures/tasks.ts)`);
    path = path.replace(placeholder, await make());
  }
  return `${path}${requiredQuery(op)}`;
}

/** Any uuid in every path parameter: for answers decided before the resource is looked up, and for 404. */
const unknownPath = (op: OperationInfo) => `${op.path.replace(/\{[^}]+\}/g, () => randomUUID())}${requiredQuery(op)}`;

/**
 * The request example of the operation in the style's own contract, with what must be unique or
 * real put in, found by the style's key names.
 */
function exampleBody(contract: OpenApiDocument, op: OperationInfo, style: Inflection, fill: Record<string, unknown>): unknown {
  const operation = contract.paths[op.path]![op.method]!;
  const media = deref(contract, operation.requestBody)?.content?.['application/json'];
  if (!media) return undefined;
  const example = media.example ?? Object.values<{ value: unknown }>(media.examples ?? {})[0]?.value;
  if (example === undefined) throw new Error(`${op.operationId} has a request body but no example in the contract: add one`);
  const styledFill = new Map(Object.entries(fill).map(([key, value]) => [styleKey(key, style), value]));
  const replace = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(replace);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, styledFill.has(key) && typeof inner === typeof styledFill.get(key) ? styledFill.get(key) : replace(inner)]));
  };
  return replace(structuredClone(example));
}

interface Case {
  name: string;
  expect: (status: number) => boolean;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

const isSuccess = (status: number) => status >= 200 && status < 300;
const is = (expected: number) => (status: number) => status === expected;
const documents = (op: OperationInfo, status: number) => String(status) in (op.raw.responses ?? {});

/** Callers that no case can spend: refused requests (403, 404) and safe methods leave a session as it was. */
interface Shared {
  adminCaller: Caller;
  admin: Record<string, string>;
  nobody: Record<string, string>;
}

async function sharedCallers(): Promise<Shared> {
  const [admin, nobody] = await Promise.all([signedIn([adminRole]).then(steppedUp), signedIn([])]);
  return { adminCaller: admin, admin: { authorization: `Bearer ${admin.accessToken}` }, nobody: { authorization: `Bearer ${nobody.accessToken}` } };
}

/**
 * Operations whose success needs a state no fixture here makes (a sign-in challenge, an enrolment
 * under way or done): their success answers are checked against the contract by
 * test/second-factor.test.ts; here, in every style, the refusal each documents for a caller
 * without that state.
 */
const NEEDS_STATE: Record<string, number> = {
  'POST /sessions/second-factor': 401,
  'POST /me/totp/confirm': 404,
  'DELETE /me/totp': 404,
  'POST /me/recovery-codes': 409,
  // The example is a code; the caller has no authenticator app (test/step-up.test.ts steps up for real).
  'POST /sessions/current/step-up': 400,
  // An assertion needs a passkey registered and a challenge of its own (test/passkeys.test.ts signs in for real).
  'POST /sessions/passkey': 401,
  // The caller has no passkey (test/step-up-passkey.test.ts asks for options and steps up for real).
  'POST /sessions/current/step-up/passkey': 409,
  // A callback needs a flow gone through the provider (test/oidc-sign-in.test.ts and test/oidc-provider.test.ts do it).
  'POST /sessions/oidc/callback': 401,
  // A step-up at the provider needs a person linked to one (test/oidc-step-up.test.ts does it).
  'POST /sessions/current/step-up/oidc': 404,
  'POST /sessions/current/step-up/oidc/callback': 400,
  // The example's token opens no invitation (test/invitations.test.ts accepts a real one).
  'POST /invitations/accept': 400,
  // The example's token opens no recovery link (test/password-resets.test.ts follows a real one).
  'POST /password-resets/confirm': 400,
  'POST /reinitialisations-mot-de-passe/confirmation': 400,
};

/**
 * Operations whose success needs a body only the service can start: registering a passkey answers
 * the options of `POST /me/passkeys/registration`, made by a software authenticator.
 */
const PREPARED_BODY: Record<string, (caller: Caller) => Promise<Record<string, unknown>>> = {
  registerPasskey: async (caller) => {
    const res = await fetch(`${server.url}/me/passkeys/registration`, { method: 'POST', headers: { authorization: `Bearer ${caller.accessToken}` } });
    const body = (await res.json()) as { options: { challenge: string; user: { id: string } } };
    expect(res.status, JSON.stringify(body)).toBe(201);
    return { credential: new SoftAuthenticator().register(body.options) };
  },
};

async function casesFor(contract: OpenApiDocument, op: OperationInfo, style: Inflection, shared: Shared): Promise<Case[]> {
  const unique = randomUUID().slice(0, 8);
  const base = { method: op.method.toUpperCase(), headers: { 'x-api-inflection': style, accept: 'application/json' } };
  const cases: Case[] = [];
  const needsState = NEEDS_STATE[`${base.method} ${op.path}`];
  const expectSuccess = needsState === undefined ? isSuccess : is(needsState);
  const successName = needsState === undefined ? 'success' : 'without the state it needs';
  if (op.path === '/api-keys/leaked') {
    // Signed by the reporting partner, not sent with a credential of ours (test/leaked-keys.test.ts
    // signs real reports): here a report whose signature does not verify, in every style.
    const signed = { ...base.headers, 'github-public-key-identifier': 'unknown-key', 'github-public-key-signature': 'MEUCIQDnotAsignature' };
    const body = exampleBody(contract, op, style, {});
    cases.push({ ...base, name: 'forged signature', expect: is(401), path: op.path, headers: signed, body });
    cases.push({ ...base, name: 'unknown query parameter', expect: is(400), path: `${op.path}?unknown_parameter=1`, headers: signed, body });
    return cases;
  }
  if (op.security.length === 0) {
    // Signing in: a real user's credentials, then a wrong password.
    const user = await makeUser(database.db, { passwordHash });
    const body = (password: string) => exampleBody(contract, op, style, { email: user.email, password });
    cases.push({ ...base, name: successName, expect: expectSuccess, path: op.path, body: body(PASSWORD) });
    cases.push({ ...base, name: 'unknown query parameter', expect: is(400), path: `${op.path}?unknown_parameter=1`, body: body(PASSWORD) });
    // A passkey's challenge asks for no password: there is no wrong one to send.
    if (needsState === undefined && JSON.stringify(body(PASSWORD) ?? null).includes(PASSWORD)) cases.push({ ...base, name: 'wrong password', expect: is(401), path: op.path, body: body(`${PASSWORD} but wrong`) });
    return cases;
  }
  if (op.security.includes('scimBearer')) return scimCases(contract, op, base);
  // Success: a safe method leaves its caller as it was; any other may end or change the session
  // or the password it is called with, so it gets a fresh administrator of its own.
  if (!op.security.includes('bearerAuth')) throw new Error(`${op.operationId} takes API keys only: give this file a caller for it`);
  const caller = op.method === 'get' ? shared.adminCaller : (op.raw['x-step-up'] === 'always' || op.raw['x-step-up'] === 'for_people') ? await steppedUp(await signedIn([adminRole])) : await signedIn([adminRole]);
  // People a meeting names must be active users.
  const preparation = FEATURE_PREPARATIONS[aliasOf.get(op.operationId) ?? op.operationId];
  const prepared = (await PREPARED_BODY[op.operationId]?.(caller)) ?? (preparation ? await preparation(server.url, caller, database.db) : {});
  const fill = { email: `styles-${unique}@example.com`, name: `styles ${unique}`, current_password: PASSWORD, refresh_token: caller.refreshToken, organizer_id: caller.userId, attendee_ids: [shared.adminCaller.userId], url: 'http://127.0.0.1:9/hook', issuer: openIdProvider.issuer, domains: [`styles-${unique}.example`], role_mappings: [], ...prepared };
  const body = exampleBody(contract, op, style, fill);
  const withBody = body === undefined ? {} : { body };
  const headers = (credential: Record<string, string>) => ({ ...base.headers, ...credential });
  const success = headers({ authorization: `Bearer ${caller.accessToken}` });
  cases.push({ ...base, ...withBody, name: successName, expect: expectSuccess, path: await successPath(op, caller), headers: success });
  cases.push({ ...base, ...withBody, name: 'unknown query parameter', expect: is(400), path: `${unknownPath(op)}${requiredQuery(op) ? '&' : '?'}unknown_parameter=1`, headers: success });
  cases.push({ ...base, ...withBody, name: 'refused credential', expect: is(401), path: unknownPath(op), headers: headers({ authorization: 'Bearer boa_not-a-real-token' }) });
  if (op.requiredPermission && documents(op, 403)) {
    cases.push({ ...base, ...withBody, name: 'without the permission', expect: is(403), path: unknownPath(op), headers: headers(shared.nobody) });
  }
  if (op.path.includes('{') && documents(op, 404)) {
    cases.push({ ...base, ...withBody, name: 'unknown id', expect: is(404), path: unknownPath(op), headers: headers(shared.admin) });
  }
  return cases;
}

/**
 * SCIM (/scim/v2): a directory's API key sent as a bearer token, and bodies whose keys RFC 7643
 * fixes, the same in every style (the request example as written, with a new userName, or the
 * person's own for a PUT). The refusals: an unknown query parameter, a refused key, a key without
 * scim.provision, an unknown id.
 */
async function scimCases(contract: OpenApiDocument, op: OperationInfo, base: { method: string; headers: Record<string, string> }): Promise<Case[]> {
  const [key, other] = await Promise.all([makeApiKey(database.db, ['scim.provision']), makeApiKey(database.db, ['tasks.list'])]);
  const bearer = (secret: string) => ({ ...base.headers, authorization: `Bearer ${secret}` });
  const path = await successPath(op, undefined);
  const media = deref(contract, contract.paths[op.path]![op.method]!.requestBody)?.content?.['application/json'];
  const example = media?.example as Record<string, unknown> | undefined;
  const userName = scimEmails.get(path.split('/').at(-1) ?? '') ?? `styles-${randomUUID().slice(0, 8)}@example.com`;
  let body = example && 'userName' in example ? { ...example, userName } : example;
  // A group's body names members by id (a real person here) and, in a PUT, the role's own name.
  if (body && op.path.startsWith('/scim/v2/Groups')) {
    const member = (await makeUser(database.db)).id;
    const swap = (list: unknown) => (Array.isArray(list) ? list.map(() => ({ value: member })) : list);
    const name = scimGroupNames.get(path.split('/').at(-1) ?? '');
    body = {
      ...body,
      ...(Array.isArray(body.members) ? { members: swap(body.members) } : {}),
      ...(Array.isArray(body.Operations) ? { Operations: body.Operations.map((o: Record<string, unknown>) => ({ ...o, value: swap(o.value) })) } : {}),
      ...(name && typeof body.displayName === 'string' ? { displayName: name } : {}),
    };
  }
  const withBody = body === undefined ? {} : { body };
  // Creating or deleting a SCIM group documents no success (groups are roles): its refusal, whatever the id.
  const refused = !Object.keys(contract.paths[op.path]![op.method]!.responses ?? {}).some((status) => status.startsWith('2'));
  const cases: Case[] = [
    { ...base, ...withBody, name: 'success', expect: refused ? is(403) : isSuccess, path, headers: bearer(key.secret) },
    { ...base, ...withBody, name: 'unknown query parameter', expect: is(400), path: `${unknownPath(op)}?unknown_parameter=1`, headers: bearer(key.secret) },
    { ...base, ...withBody, name: 'refused credential', expect: is(401), path: unknownPath(op), headers: bearer('bok_not-a-real-key') },
    { ...base, ...withBody, name: 'without the permission', expect: is(403), path: unknownPath(op), headers: bearer(other.secret) },
  ];
  if (op.path.includes('{')) cases.push({ ...base, ...withBody, name: 'unknown id', expect: is(refused ? 403 : 404), path: unknownPath(op), headers: bearer(key.secret) });
  return cases;
}

/** What the service logged for a request that failed (a response that breaks the contract, for one). */
function loggedError(requestId: string): string {
  const record = server.records().find((line) => (line.req as { id?: string } | undefined)?.id === requestId && line.err);
  return (record?.err as { message?: string } | undefined)?.message ?? 'nothing';
}

/** Sends a case through the proxy; returns what is wrong with the answer, if anything. */
async function drive(proxy: PrismProcess, testCase: Case): Promise<string | undefined> {
  const res = await fetch(`${proxy.url}${testCase.path}`, {
    method: testCase.method,
    headers: { ...testCase.headers, ...(testCase.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(testCase.body === undefined ? {} : { body: JSON.stringify(testCase.body) }),
  });
  const text = await res.text();
  const label = `${testCase.method} ${testCase.path} (${testCase.name})`;
  const violations = res.headers.get('sl-violations');
  if (violations) return `${label}: Prism reports ${violations}`;
  // Prism's own answers (a refused request, an unreachable upstream) carry no request id of ours.
  if (!res.headers.get('x-request-id')) return `${label}: answered by Prism, not the service: ${res.status} ${text}`;
  if (res.status === 500) return `${label}: 500, the service logged: ${loggedError(res.headers.get('x-request-id')!)}`;
  if (!testCase.expect(res.status)) return `${label}: unexpected ${res.status} ${text}`;
  return undefined;
}

describe.each(INFLECTIONS.map((style) => ({ style })))('Prism validation proxy with the $style contract', ({ style }) => {
  const contract = JSON.parse(readFileSync(bundlePath(style), 'utf8')) as OpenApiDocument;
  let proxy: PrismProcess;
  let shared: Shared;
  beforeAll(async () => {
    [proxy, shared] = await Promise.all([proxies.get(style)!, sharedCallers()]);
  });

  it.each(operations.map((op) => ({ op, name: `${op.method.toUpperCase()} ${op.path}` })))(
    '$name: success and main errors, zero violations',
    async ({ op }) => {
      const problems: string[] = [];
      for (const testCase of await casesFor(contract, op, style, shared)) {
        const problem = await drive(proxy, testCase);
        if (problem) problems.push(problem);
      }
      expect(problems).toEqual([]);
    },
  );

  it('reports an answer in another style (the control that keeps this file honest)', async () => {
    // What a partner met before each style had its contract: camel bodies checked against snake.
    // Against a styled contract, the same happens to a client that forgets the header.
    const otherStyle: Record<string, string> = style === 'snake' ? { 'x-api-inflection': 'pascal' } : {};
    const caller = await signedIn([adminRole]);
    const res = await fetch(`${proxy.url}/me`, { headers: { authorization: `Bearer ${caller.accessToken}`, ...otherStyle } });
    expect(res.headers.get('sl-violations')).toMatch(/must NOT have additional properties/);
  });
});
