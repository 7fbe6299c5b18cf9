// The authorization matrix, generated from the contract: every secured operation, whatever its
// path, is called with no credentials, API keys without and with its permission, an expired key,
// a revoked key, and signed-in users without and with it. A new operation is covered as soon as
// it is in the spec (or this file fails, asking for a fixture for its path parameter).
import { randomUUID } from 'node:crypto';
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, spec, type TestDatabase } from './support/context.js';
import { expectContractResponse, requiredQuery } from './support/contract.js';
import { makeApiKey, makeIdentityProvider, makePasskey, makeRole, makeUser, makeWebhookDelivery, makeWebhookEndpoint } from './support/access-fixtures.js';
import { OPERATOR } from '../src/auth/authority.js';
import { deref, indexOperations, type OperationInfo } from '../src/contract/spec.js';
import { aliasOperations } from '../src/contract/path-aliases.js';
import { featureFixtures, featurePreparations } from './fixtures/index.js';
import { ManualClock, systemClock } from '../src/clock.js';
import { SoftAuthenticator } from './support/passkey.js';
import { permissionOfEventType } from '../src/audit/outbox.js';
import { enrolTotp, stepUp, totpCode } from './support/second-factor.js';
import { hashPassword } from '../src/auth/secrets/passwords.js';
import { PERMISSIONS, isPermission } from '../src/auth/permissions.js';
import { startHandMadeProvider, type HandMadeProvider } from './support/oidc.js';
import type { Kysely } from 'kysely';
import type { Database } from '../src/db/schema.js';

const secured = indexOperations(spec).filter((op) => op.security.length > 0);
const operationPaths = new Map(indexOperations(spec).map((op) => [op.operationId, op.path]));
const aliasOf = aliasOperations(spec);
/** The path that names the resource: an alias's original's (`/taches/{id}` is a task). */
const resourcePathOf = (op: OperationInfo) => operationPaths.get(aliasOf.get(op.operationId) ?? op.operationId) ?? op.path;
const PASSWORD = 'matrix passphrase 1234';

let database: TestDatabase;
/** An active user, for the people a request example names. */
let attendee: string;
/** The issuer of identity providers created here: one that answers discovery. */
let openIdProvider: HandMadeProvider;
beforeAll(async () => {
  database = await createTestDatabase();
  attendee = (await makeUser(database.db)).id;
  openIdProvider = await startHandMadeProvider();
});
afterAll(async () => {
  await openIdProvider.close();
  await database.destroy();
});

const makeMatrixIdentityProvider = (db: Kysely<Database>) => makeIdentityProvider(db, openIdProvider.issuer);

/**
 * A fresh resource for each path parameter, by the first segment of the path (of the original path
 * for a French alias): the platform's below, each feature's in test/fixtures/<segment>.ts. Roles and keys hold no
 * permission: acting on a target that holds one the caller lacks is refused (target_outranks_caller,
 * tested in test/escalation.test.ts), and this matrix is about the operation's own permission.
 */
const RESOURCES: Record<string, (db: Kysely<Database>) => Promise<string>> = {
  ...(await featureFixtures()),
  users: async (db) => (await makeUser(db)).id,
  roles: async (db) => (await makeRole(db, [])).id,
  'api-keys': async (db) => (await makeApiKey(db, [])).id,
  'webhook-endpoints': async (db) => (await makeWebhookEndpoint(db)).id,
  'identity-providers': makeMatrixIdentityProvider,
  // SCIM's /scim/v2/Users/{id}: a person holding nothing (a provisioning key sees only people it outranks).
  scim: async (db) => {
    const user = await makeUser(db);
    scimEmails.set(user.id, user.email);
    return user.id;
  },
  // SCIM's /scim/v2/Groups/{id}: a role granting nothing (a provisioning key sees the roles it may grant).
  'scim-groups': async (db) => {
    const role = await makeRole(db, []);
    scimGroupNames.set(role.id, role.name);
    return role.id;
  },
};

/** The name of each role made for a SCIM Groups path: a group's PUT sends its displayName back unchanged. */
const scimGroupNames = new Map<string, string>();

/**
 * A SCIM Groups body names members by id: the example's member becomes a real person, and a PUT's
 * displayName the role's own name (a group's name is the administrators').
 */
async function scimGroupBody(body: Record<string, unknown>, path: string): Promise<Record<string, unknown>> {
  const member = (await makeUser(database.db)).id;
  const swap = (list: unknown) => (Array.isArray(list) ? list.map(() => ({ value: member })) : list);
  const name = scimGroupNames.get(path.split('/').at(-1) ?? '');
  return {
    ...body,
    ...(Array.isArray(body.members) ? { members: swap(body.members) } : {}),
    ...(Array.isArray(body.Operations) ? { Operations: body.Operations.map((o: Record<string, unknown>) => ({ ...o, value: swap(o.value) })) } : {}),
    ...(name && typeof body.displayName === 'string' ? { displayName: name } : {}),
  };
}

/** The e-mail of each person made for a SCIM path: a SCIM PUT sends the person's userName back unchanged. */
const scimEmails = new Map<string, string>();

/** A signed-in caller (through the real POST /sessions), when the case has one. */
interface Caller {
  userId: string;
  sessionId: string;
  password: string;
  accessToken: string;
  refreshToken: string;
}

async function concretePath(op: OperationInfo, caller?: Caller): Promise<string> {
  // Sessions exist only by signing in: one's own session, or another user's.
  if (op.path === '/sessions/{id}') return `/sessions/${(caller ?? (await signedInWith([]))).sessionId}`;
  // A passkey exists only as someone's: the caller's own, or (without a caller) another user's.
  if (op.path === '/me/passkeys/{id}') return `/me/passkeys/${await makePasskey(database.db, caller?.userId ?? (await makeUser(database.db)).id)}`;
  if (op.path.includes('{delivery_id}')) {
    const { endpointId, deliveryId } = await makeWebhookDelivery(database.db);
    return op.path.replace('{id}', endpointId).replace('{delivery_id}', deliveryId);
  }
  if (op.path.includes('{session_id}')) {
    const other = await signedInWith([]);
    return op.path.replace('{id}', other.userId).replace('{session_id}', other.sessionId);
  }
  let path = op.path;
  for (const [placeholder] of op.path.matchAll(/\{[^}]+\}/g)) {
    const kind = op.path.startsWith('/scim/v2/Groups/') ? 'scim-groups' : (resourcePathOf(op).split('/')[1] ?? '');
    const make = RESOURCES[kind];
    if (!make) throw new Error(`No fixture for ${placeholder} in ${op.path}: add test/fixtures/${kind}.ts (see test/fixtures/tasks.ts)`);
    path = path.replace(placeholder, await make(database.db));
  }
  return `${path}${requiredQuery(op)}`;
}

/** The contract's own request example, with names and e-mails made unique so that it can be replayed. */
function exampleBody(op: OperationInfo, caller?: Caller): unknown {
  const requestBody = deref(spec, op.raw.requestBody);
  const media = requestBody?.content?.['application/json'];
  if (!media) return undefined;
  const example = structuredClone(media.example ?? Object.values<{ value: unknown }>(media.examples ?? {})[0]?.value);
  if (example === undefined) throw new Error(`${op.operationId} has a request body but no example in the contract`);
  const unique = randomUUID().slice(0, 8);
  if (typeof example === 'object' && example !== null) {
    const body = example as Record<string, unknown>;
    if (typeof body.email === 'string') body.email = `matrix-${unique}@example.com`;
    // SCIM (keys fixed by RFC 7643): a new person's userName is new; a replaced one's is theirs.
    if (typeof body.userName === 'string') body.userName = `matrix-${unique}@example.com`;
    if (typeof body.name === 'string') body.name = `${body.name} ${unique}`;
    if (typeof body.url === 'string') body.url = 'http://127.0.0.1:9/hook';
    // People named in a meeting must be active users.
    if (typeof body.organizer_id === 'string') body.organizer_id = attendee;
    if (Array.isArray(body.attendee_ids)) body.attendee_ids = [attendee];
    // What only the signed-in caller can know: their password, their refresh token.
    if (caller && typeof body.current_password === 'string') body.current_password = caller.password;
    // A step-up by a person without a second factor: their password (the contract's first example is a code).
    if (caller && op.operationId === 'stepUpSession') return { password: caller.password };
    if (caller && typeof body.refresh_token === 'string') body.refresh_token = caller.refreshToken;
    // An identity provider: an issuer that answers, domains of its own, no roles (the example's do not exist here).
    if (typeof body.issuer === 'string') body.issuer = openIdProvider.issuer;
    if (Array.isArray(body.domains)) body.domains = [`matrix-${unique}.example`];
    if (Array.isArray(body.role_mappings)) body.role_mappings = [];
  }
  return example;
}

const otherPermission = (op: OperationInfo) => (op.requiredPermission === 'meetings.update' ? 'meetings.list' : 'meetings.update');
/** Operations that need the right to read the fixture endpoint's events (task.created): a rotation's secret signs them, a replay sends one. */
const READS_FIXTURE_EVENTS = new Set(['rotateWebhookEndpointSecret', 'replayWebhookDelivery']);
/** Operations that need a second permission besides their own: an invitation makes an account. */
const ALSO_NEEDS: Record<string, string[]> = { createInvitation: ['users.create'], resendInvitation: ['users.create'] };
/**
 * What the caller "with the permission" holds: the operation's permission, plus any permission its
 * request example hands out (a role or key may only get permissions its creator holds), plus the
 * fixture's events' one where the operation needs it.
 */
function grantedPermissions(op: OperationInfo): string[] {
  // Configuring an identity provider needs every permission (it may sign in as anyone of its domains: docs/IDENTITY.md).
  if (op.requiredPermission === 'identity_providers.manage' && op.method !== 'get') return [...PERMISSIONS];
  const handedOut = JSON.stringify(exampleBody(op) ?? null).match(/"[a-z_]+\.[a-z_]+"/g) ?? [];
  const quoted = handedOut.map((q) => q.slice(1, -1));
  // A permission it hands out, or the permission that reading an event type it subscribes to needs.
  const inExample = [...quoted.filter(isPermission), ...quoted.map(permissionOfEventType).filter((p): p is string => p !== undefined)];
  return [...new Set([op.requiredPermission ?? 'tasks.list', ...inExample, ...(ALSO_NEEDS[op.operationId] ?? []), ...(READS_FIXTURE_EVENTS.has(op.operationId) ? [permissionOfEventType('task.created')!] : [])])];
}

/**
 * Operations on the caller's own second factor succeed only once there is one (an authenticator
 * app enrolled, or pending its first code): set it up first; what it returns replaces body fields.
 * Both are sensitive changes: the session steps up with a recovery code (docs/AUTH.md, "Step-up").
 */
const withFactorSteppedUp = async (app: Parameters<typeof request>[0], caller: Caller) => {
  const { recoveryCodes } = await enrolTotp(app, caller.accessToken, systemClock, caller.password);
  await stepUp(app, caller.accessToken, { recovery_code: recoveryCodes[0]! }).expect(200);
  return {};
};
const SECOND_FACTOR_FIRST: Record<string, (app: Parameters<typeof request>[0], caller: Caller) => Promise<Record<string, unknown>>> = {
  removeTotp: withFactorSteppedUp,
  regenerateRecoveryCodes: withFactorSteppedUp,
  confirmTotpEnrolment: async (app, caller) => {
    await stepUp(app, caller.accessToken, { password: caller.password }).expect(200);
    const { body } = await request(app).post('/me/totp').set('authorization', `Bearer ${caller.accessToken}`).expect(201);
    return { totp_code: totpCode(body.secret, new Date()) };
  },
  // Asking for a step-up's passkey options needs a passkey of one's own.
  startPasskeyStepUp: async (_app, caller) => {
    await makePasskey(database.db, caller.userId);
    return {};
  },
  registerPasskey: async (app, caller) => {
    const { body } = await request(app).post('/me/passkeys/registration').set('authorization', `Bearer ${caller.accessToken}`).expect(201);
    return { credential: new SoftAuthenticator().register(body.options) };
  },
};

/**
 * The caller linked to the hand-made provider (one provider for the matrix): a step-up at the
 * provider needs a link, through a provider still answering for the caller's domain (the fixtures'
 * people are of example.com; docs/IDENTITY.md).
 */
let stepUpProviderId: Promise<string> | undefined;
async function linkToProvider(caller: Caller): Promise<string> {
  stepUpProviderId ??= makeIdentityProvider(database.db, openIdProvider.issuer, ['example.com'], { id: openIdProvider.clientId, secret: openIdProvider.clientSecret });
  const subject = `matrix-${caller.userId}`;
  const now = new Date();
  await database.db
    .insertInto('identity_links')
    .values({ issuer: openIdProvider.issuer, subject, user_id: caller.userId, provider_id: await stepUpProviderId, created_at: now, last_sign_in_at: now })
    .onConflict((oc) => oc.doNothing())
    .execute();
  return subject;
}
// Each feature's own (test/fixtures/<name>.ts).
const FEATURE_PREPARATIONS = await featurePreparations();

SECOND_FACTOR_FIRST.startOidcStepUp = async (_app, caller) => (await linkToProvider(caller), {});
SECOND_FACTOR_FIRST.completeOidcStepUp = async (app, caller) => {
  const sub = await linkToProvider(caller);
  const { body } = await request(app).post('/sessions/current/step-up/oidc').set('authorization', `Bearer ${caller.accessToken}`).expect(201);
  return { ...openIdProvider.authorize(body.authorization_url as string, { sub, auth_time: Math.floor(Date.now() / 1000) }), flow_token: body.flow_token as string };
};

async function call(op: OperationInfo, headers: Record<string, string>, caller?: Caller) {
  // Webhook URLs on loopback: the matrix is about who may call, not about where a URL points.
  const { app } = createTestApp(database.db, { clock: systemClock, env: { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true' } });
  const path = await concretePath(op, caller);
  const original = aliasOf.get(op.operationId) ?? op.operationId;
  const preparation = SECOND_FACTOR_FIRST[op.operationId] ?? FEATURE_PREPARATIONS[original];
  const prepared = caller && headers.authorization && preparation ? await preparation(app, caller, database.db) : {};
  // A sensitive change: the caller's session holds a fresh proof (by a second factor: the caller
  // may hold one, a passkey made for the case); step-up itself is tested in test/step-up.test.ts.
  if (caller && headers.authorization && (op.raw['x-step-up'] === 'always' || op.raw['x-step-up'] === 'for_people')) {
    await database.db.updateTable('sessions').set({ stepped_up_at: new Date(), step_up_method: 'recovery_code' }).where('id', '=', caller.sessionId).execute();
  }
  let req = request(app)[op.method](path).set(headers);
  const example = exampleBody(op, caller);
  const scimEmail = scimEmails.get(path.split('/').at(-1) ?? '');
  let body = example === undefined ? undefined : { ...(example as object), ...prepared, ...(scimEmail && op.method === 'put' ? { userName: scimEmail } : {}) };
  if (body && op.path.startsWith('/scim/v2/Groups')) body = await scimGroupBody(body as Record<string, unknown>, path);
  if (body !== undefined) req = req.send(body as object);
  const res = await req;
  expectContractResponse(res, op.method, path);
  return res;
}

/** An operation the contract documents no success for (creating or deleting a SCIM group: groups are roles): its refusal. */
const alwaysRefused = (op: OperationInfo) => !Object.keys(op.raw.responses ?? {}).some((status) => status.startsWith('2'));

function expectSuccess(res: request.Response, op: OperationInfo) {
  if (alwaysRefused(op)) {
    expect(res.status, `${op.operationId}: ${res.text}`).toBe(403);
    expect(res.body.code, res.text).toBe('groups_are_roles');
    return;
  }
  expect(res.status, `${op.operationId}: ${res.text}`).toBeGreaterThanOrEqual(200);
  expect(res.status, `${op.operationId}: ${res.text}`).toBeLessThan(300);
}

function expectForbidden(res: request.Response, op: OperationInfo) {
  expect(res.status, res.text).toBe(403);
  expect(res.body.required_permission).toBe(op.requiredPermission);
}

it('covers every secured operation of the contract', () => {
  expect(secured.length).toBeGreaterThanOrEqual(18);
  for (const op of secured) expect(op.raw['x-required-permission'], op.operationId).toBeDefined();
});

describe.each(secured.map((op) => ({ op, name: `${op.method.toUpperCase()} ${op.path}` })))('$name', ({ op }) => {
  const acceptsKey = op.security.includes('apiKey');

  it('answers 401 without credentials', async () => {
    const res = await call(op, {});
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthenticated');
  });

  it(`API key without the permission: ${!acceptsKey ? '401 (keys not accepted)' : op.requiredPermission ? '403' : 'allowed'}`, async () => {
    const key = await makeApiKey(database.db, [otherPermission(op)]);
    const res = await call(op, { 'x-api-key': key.secret });
    if (!acceptsKey) expect(res.status).toBe(401);
    else if (op.requiredPermission) expectForbidden(res, op);
    else expectSuccess(res, op);
  });

  it(`API key with the permission: ${acceptsKey ? 'allowed' : '401 (keys not accepted)'}`, async () => {
    const key = await makeApiKey(database.db, grantedPermissions(op));
    const res = await call(op, { 'x-api-key': key.secret });
    if (acceptsKey) expectSuccess(res, op);
    else expect(res.status).toBe(401);
  });

  it('expired API key: 401', async () => {
    const past = new ManualClock(new Date(Date.now() - 2 * 3600_000));
    const key = await makeApiKey(database.db, grantedPermissions(op), { clock: past, expiresAt: new Date(Date.now() - 3600_000).toISOString() });
    const res = await call(op, { 'x-api-key': key.secret });
    expect(res.status).toBe(401);
    if (acceptsKey) expect(res.body.code).toBe('api_key_expired');
  });

  it('revoked API key: 401', async () => {
    const key = await makeApiKey(database.db, grantedPermissions(op));
    await key.service.revoke(OPERATOR, key.id);
    const res = await call(op, { 'x-api-key': key.secret });
    expect(res.status).toBe(401);
    if (acceptsKey) expect(res.body.code).toBe('invalid_api_key');
  });
});

// ---------------------------------------------------------------------------------------------
// Bearer callers, signed in through the real POST /sessions. The probe below guards against a
// build without sign-in (POST /sessions answering 503), where this block shows as skipped.

async function probeSignIn(): Promise<boolean> {
  const db = await createTestDatabase();
  try {
    const { email } = await makeUser(db.db, { passwordHash: await hashPassword(PASSWORD) });
    const { app } = createTestApp(db.db);
    const res = await request(app).post('/sessions').send({ session: { email, password: PASSWORD } });
    return res.status === 201 && typeof res.body.access_token === 'string';
  } finally {
    await db.destroy();
  }
}
const signInAvailable = await probeSignIn();

/** A fresh user whose only role holds `permissions`, signed in for real (a new session each time). */
async function signedInWith(permissions: string[]): Promise<Caller> {
  const role = await makeRole(database.db, permissions);
  const user = await makeUser(database.db, { roleIds: [role.id], passwordHash: await hashPassword(PASSWORD) });
  const { app } = createTestApp(database.db);
  const res = await request(app).post('/sessions').send({ session: { email: user.email, password: PASSWORD } });
  expect(res.status, res.text).toBe(201);
  const session = await database.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).executeTakeFirstOrThrow();
  return { userId: user.id, sessionId: session.id, password: PASSWORD, accessToken: res.body.access_token, refreshToken: res.body.refresh_token };
}

describe.skipIf(!signInAvailable)('bearer callers via real sign-in (skipped only if POST /sessions is unavailable)', () => {
  describe.each(secured.map((op) => ({ op, name: `${op.method.toUpperCase()} ${op.path}` })))('$name', ({ op }) => {
    const acceptsBearer = op.security.includes('bearerAuth');

    it(`user without the permission: ${!acceptsBearer ? '401' : op.requiredPermission ? '403' : 'allowed'}`, async () => {
      const caller = await signedInWith([otherPermission(op)]);
      const res = await call(op, { authorization: `Bearer ${caller.accessToken}` }, caller);
      if (!acceptsBearer) expect(res.status).toBe(401);
      else if (op.requiredPermission) expectForbidden(res, op);
      else expectSuccess(res, op);
    });

    it(`user with the permission: ${acceptsBearer ? 'allowed' : '401'}`, async () => {
      const caller = await signedInWith(grantedPermissions(op));
      const res = await call(op, { authorization: `Bearer ${caller.accessToken}` }, caller);
      if (acceptsBearer) expectSuccess(res, op);
      else expect(res.status).toBe(401);
    });
  });
});

describe.skipIf(!signInAvailable)('role changes through real sign-in (skipped only if POST /sessions is unavailable)', () => {
  it('take effect on the signed-in user\u2019s very next request', async () => {
    const role = await makeRole(database.db, ['users.list']);
    const { email } = await makeUser(database.db, { roleIds: [role.id], passwordHash: await hashPassword(PASSWORD) });
    const { app } = createTestApp(database.db);
    const signIn = await request(app).post('/sessions').send({ session: { email, password: PASSWORD } });
    const auth = `Bearer ${signIn.body.access_token as string}`;
    expect((await request(app).get('/users').set('authorization', auth)).status).toBe(200);
    await database.db.deleteFrom('role_permissions').where('role_id', '=', role.id).execute();
    expect((await request(app).get('/users').set('authorization', auth)).status).toBe(403);
    await database.db.insertInto('role_permissions').values({ role_id: role.id, permission: 'users.list' }).execute();
    expect((await request(app).get('/users').set('authorization', auth)).status).toBe(200);
  });
});
