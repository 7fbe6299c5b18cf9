// Model-based property test of the rule "nobody gains, prolongs or takes away a right they do not
// hold" (docs/AUTH.md, "Changing rights"), on the real service and PostgreSQL. Random actors (users
// with random role sets, signed in; API keys with random permission subsets, some wider than their
// creator) run random sequences of every operation that changes rights. After every step the
// database is read back and checked, by an oracle written here independently of src/:
//   (a) no successful operation gave anyone (the caller included) a permission, a secret or a
//       longer life for a key that holds permissions the caller lacked;
//   (b) no successful operation took from a user or a role (or ended another user's sessions) a
//       permission the caller lacked; API keys are the documented exception (revoking and
//       narrowing a key only take away, and any key manager may do them);
//   (c) at least one active administrator exists;
//   (d) every refused operation changed nothing, and nothing answered 5xx.
// AUTHORITY_MODEL_RUNS (default 50), AUTHORITY_MODEL_STEPS (default 15) and AUTHORITY_MODEL_SEED
// make longer or replayed runs: AUTHORITY_MODEL_RUNS=500 npx vitest run test/authority-model.test.ts
import type { Server } from 'node:http';
import { afterAll, expect, it } from 'vitest';
import fc from 'fast-check';
import request from 'supertest';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import { adminRoleId, makeRole, makeUser } from './support/access-fixtures.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { digestSecret, generateSecret } from '../src/auth/secrets/secrets.js';
import { newTokenSet } from '../src/auth/sessions/tokens.js';
import { ManualClock } from '../src/clock.js';
import { apiKeyRow } from './support/rows.js';

const RUNS = Number(process.env.AUTHORITY_MODEL_RUNS ?? 50);
const STEPS = Number(process.env.AUTHORITY_MODEL_STEPS ?? 15);
const SEED = process.env.AUTHORITY_MODEL_SEED === undefined ? undefined : Number(process.env.AUTHORITY_MODEL_SEED);

/** The permissions the operations under test need or hand out, so random sets hit them often. */
const UNIVERSE = ['users.read', 'users.create', 'users.update', 'users.disable', 'roles.manage', 'api_keys.manage', 'sessions.manage', 'tasks.list'];
const DAY = 86_400_000;

type Actor = { label: string } & ({ kind: 'user'; userId: string; sessionId: string; token: string } | { kind: 'key'; secret: string });

interface Model {
  users: string[];
  roles: { id: string; name: string }[];
  keys: string[];
  actors: Actor[];
  counter: number;
}

interface Real {
  db: Kysely<Database>;
  server: Server;
  clock: ManualClock;
  tables: string[];
}

// ---------------------------------------------------------------------------------------------
// The oracle: who holds what, read from the tables.

interface Snapshot {
  userPerms: Map<string, Set<string>>;
  rolePerms: Map<string, Set<string>>;
  keys: Map<string, { declared: string[]; effective: Set<string>; expiresAt: number | null; revoked: boolean; secrets: Set<string> }>;
  secrets: Map<string, { keyId: string; retiresAt: number | null }>;
  liveSessions: Map<string, Set<string>>;
  activeAdmins: number;
}

async function snapshot(db: Kysely<Database>, now: number): Promise<Snapshot> {
  const [users, roles, rolePermissions, userRoles, keys, secrets, sessions] = await Promise.all([
    db.selectFrom('users').select(['id', 'status']).execute(),
    db.selectFrom('roles').select(['id', 'name', 'built_in']).execute(),
    db.selectFrom('role_permissions').selectAll().execute(),
    db.selectFrom('user_roles').selectAll().execute(),
    db.selectFrom('api_keys').select(['id', 'permissions', 'created_by', 'expires_at', 'revoked_at']).execute(),
    db.selectFrom('api_key_secrets').select(['digest', 'api_key_id', 'retires_at']).execute(),
    db.selectFrom('sessions').select(['id', 'user_id']).where('revoked_at', 'is', null).where('ended_at', 'is', null).execute(),
  ]);
  const rolePerms = new Map<string, Set<string>>();
  for (const r of roles) {
    const own = rolePermissions.filter((rp) => rp.role_id === r.id).map((rp) => rp.permission);
    rolePerms.set(r.id, new Set(r.built_in && r.name === 'admin' ? PERMISSIONS : own));
  }
  const adminRole = roles.find((r) => r.built_in && r.name === 'admin')!.id;
  const userPerms = new Map<string, Set<string>>();
  let activeAdmins = 0;
  for (const u of users) {
    const held = userRoles.filter((ur) => ur.user_id === u.id).map((ur) => ur.role_id);
    const active = u.status === 'active';
    if (active && held.includes(adminRole)) activeAdmins += 1;
    userPerms.set(u.id, new Set(active ? held.flatMap((id) => [...rolePerms.get(id)!]) : []));
  }
  const keyMap: Snapshot['keys'] = new Map();
  for (const k of keys) {
    const expiresAt = k.expires_at ? k.expires_at.getTime() : null;
    const usable = !k.revoked_at && (expiresAt === null || expiresAt > now);
    const creator = k.created_by === null ? null : userPerms.get(k.created_by)!;
    const effective = !usable ? [] : creator === null ? k.permissions : k.permissions.filter((p) => creator.has(p));
    const own = secrets.filter((s) => s.api_key_id === k.id).map((s) => s.digest.toString('hex'));
    keyMap.set(k.id, { declared: k.permissions, effective: new Set(effective), expiresAt, revoked: k.revoked_at !== null, secrets: new Set(own) });
  }
  const secretMap = new Map(secrets.map((s) => [s.digest.toString('hex'), { keyId: s.api_key_id, retiresAt: s.retires_at ? s.retires_at.getTime() : null }]));
  const liveSessions = new Map<string, Set<string>>();
  for (const s of sessions) liveSessions.set(s.user_id, (liveSessions.get(s.user_id) ?? new Set()).add(s.id));
  return { userPerms, rolePerms, keys: keyMap, secrets: secretMap, liveSessions, activeAdmins };
}

/** What the actor may do in this state: nothing once its session or key is gone. */
function actorPermissions(actor: Actor, s: Snapshot, now: number): Set<string> {
  if (actor.kind === 'user') return s.liveSessions.get(actor.userId)?.has(actor.sessionId) ? s.userPerms.get(actor.userId)! : new Set();
  const secret = s.secrets.get(digestSecret(actor.secret).toString('hex'));
  if (!secret || (secret.retiresAt !== null && secret.retiresAt <= now)) return new Set();
  return s.keys.get(secret.keyId)!.effective;
}

const minus = (a: Iterable<string>, b: Set<string>) => [...a].filter((p) => !b.has(p));
const EMPTY = new Set<string>();

/** (a), (b), (c) after a successful operation. Returns the violations found. */
function violations(before: Snapshot, after: Snapshot, caller: Set<string>, actor: Actor): string[] {
  const found: string[] = [];
  const beyond = (what: string, perms: string[]) => {
    const extra = minus(perms, caller);
    if (extra.length > 0) found.push(`${what}: ${extra.join(', ')} (the caller held ${[...caller].sort().join(', ') || 'nothing'})`);
  };
  for (const id of new Set([...before.userPerms.keys(), ...after.userPerms.keys()])) {
    const b = before.userPerms.get(id) ?? EMPTY;
    const a = after.userPerms.get(id) ?? EMPTY;
    beyond(`(a) user ${id} gained`, minus(a, b));
    beyond(`(b) user ${id} lost`, minus(b, a));
    const ended = minus(before.liveSessions.get(id) ?? EMPTY, after.liveSessions.get(id) ?? EMPTY);
    if (ended.length > 0 && !(actor.kind === 'user' && actor.userId === id)) beyond(`(b) user ${id} had sessions ended while holding`, [...b]);
  }
  for (const id of new Set([...before.rolePerms.keys(), ...after.rolePerms.keys()])) {
    const b = before.rolePerms.get(id) ?? EMPTY;
    const a = after.rolePerms.get(id) ?? EMPTY;
    beyond(`(a) role ${id} gained`, minus(a, b));
    beyond(`(b) role ${id} lost`, minus(b, a));
  }
  for (const [id, a] of after.keys) {
    const b = before.keys.get(id);
    beyond(`(a) key ${id} gained effective`, minus(a.effective, b?.effective ?? EMPTY));
    if (a.revoked) continue;
    if (!b || minus(a.secrets, b.secrets).length > 0) beyond(`(a) the caller obtained a secret of key ${id} holding`, a.declared);
    const prolonged = b && b.expiresAt !== null && (a.expiresAt === null || a.expiresAt > b.expiresAt);
    if (prolonged) beyond(`(a) key ${id} was prolonged holding`, a.declared);
  }
  if (after.activeAdmins < 1) found.push('(c) no active administrator is left');
  return found;
}

// ---------------------------------------------------------------------------------------------
// Operations: each picks its actor and target by index, so that any sequence can run on any state.

/** What answered what, over the whole run: shows the sequences reach successes and each refusal. */
const outcomes = new Map<string, number>();
const tally = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);

type Plan = { method: 'post' | 'patch' | 'delete'; path: string; body?: object; after?: (res: request.Response, m: Model, r: Real) => Promise<void> };

const pick = <T>(list: T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length]);
const perms = fc.subarray(UNIVERSE, { minLength: 1 });

/** Mostly people: keys may not manage keys or sessions, so most of their attempts end in 401. */
type ActorPick = { kind: 'user' | 'key'; n: number };

function pickActor(m: Model, p: ActorPick): Actor {
  const ofKind = m.actors.filter((a) => a.kind === p.kind);
  return pick(ofKind.length > 0 ? ofKind : m.actors, p.n)!;
}

class Operation implements fc.AsyncCommand<Model, Real> {
  private resolved = '';
  constructor(
    readonly name: string,
    readonly actorPick: ActorPick,
    readonly plan: (m: Model, r: Real) => Plan | undefined,
  ) {}

  check = () => true;

  async run(m: Model, r: Real): Promise<void> {
    const actor = pickActor(m, this.actorPick);
    const plan = this.plan(m, r);
    if (!plan) return;
    const now = r.clock.now().getTime();
    const before = await snapshot(r.db, now);
    const digests = await digestTables(r.db, r.tables);
    const caller = actorPermissions(actor, before, now);
    let req = request(r.server)[plan.method](plan.path);
    req = actor.kind === 'user' ? req.set('authorization', `Bearer ${actor.token}`) : req.set('x-api-key', actor.secret);
    const res = await (plan.body ? req.send(plan.body) : req);
    this.resolved = `${actor.label} [${[...caller].sort().join(' ')}] ${plan.method.toUpperCase()} ${plan.path} ${JSON.stringify(plan.body ?? '')} -> ${res.status} ${res.body?.code ?? ''}`;
    expect(res.status, `${this.resolved}: ${res.text}`).toBeLessThan(500);
    tally(`${this.name} ${res.status}${res.status >= 400 ? ` ${res.body?.code}` : ''}`);
    if (res.status >= 400) {
      expect(changedTables(digests, await digestTables(r.db, r.tables)), `(d) refused but changed: ${this.resolved}`).toEqual([]);
      return;
    }
    const after = await snapshot(r.db, now);
    const found = violations(before, after, caller, actor);
    if (found.length > 0) throw new Error(`${this.resolved}\n${found.join('\n')}`);
    await plan.after?.(res, m, r);
  }

  // The resolved request (actor, what it held, what it sent, the answer) is in the failure message.
  toString(): string {
    return `${this.name}(${this.actorPick.kind} ${this.actorPick.n})`;
  }
}

const actorArb: fc.Arbitrary<ActorPick> = fc.record({
  kind: fc.oneof({ weight: 4, arbitrary: fc.constant('user' as const) }, { weight: 1, arbitrary: fc.constant('key' as const) }),
  n: fc.nat({ max: 50 }),
});
const targetArb = fc.nat({ max: 50 });
const expiryArb = fc.constantFrom('none', 'sooner', 'later', 'never');

function expiry(kind: string, r: Real): string | null | undefined {
  const now = r.clock.now().getTime();
  if (kind === 'never') return null;
  if (kind === 'sooner') return new Date(now + 3600_000).toISOString();
  if (kind === 'later') return new Date(now + 30 * DAY).toISOString();
  return undefined;
}

/** A new user or key becomes an actor too. */
async function addKeyActor(res: request.Response, m: Model) {
  m.actors.push({ label: `key ${res.body.api_key.id}`, kind: 'key', secret: res.body.secret });
}

const commands = [
  fc.tuple(actorArb, perms, expiryArb).map(([a, p, e]) => new Operation('createKey', a, (m, r) => ({ method: 'post', path: '/api-keys', body: { name: `k${++m.counter}`, permissions: p, ...(e === 'sooner' || e === 'later' ? { expires_at: expiry(e, r) } : {}) }, after: async (res, model) => { model.keys.push(res.body.api_key.id); await addKeyActor(res, model); } }))),
  fc.tuple(actorArb, targetArb, fc.constantFrom(0, 3600)).map(([a, t, grace]) => new Operation('rotateKey', a, (m) => {
    const key = pick(m.keys, t);
    return key === undefined ? undefined : { method: 'post', path: `/api-keys/${key}/rotate`, body: grace ? { grace_period_seconds: grace } : {}, after: addKeyActor };
  })),
  fc.tuple(actorArb, targetArb, expiryArb, fc.option(perms)).map(([a, t, e, p]) => new Operation('patchKey', a, (m, r) => {
    const key = pick(m.keys, t);
    const body = { ...(e === 'none' ? {} : { expires_at: expiry(e, r) }), ...(p ? { permissions: p } : {}) };
    return key === undefined ? undefined : { method: 'patch', path: `/api-keys/${key}`, body: Object.keys(body).length ? body : { name: `k${++m.counter}` } };
  })),
  fc.tuple(actorArb, targetArb).map(([a, t]) => new Operation('revokeKey', a, (m) => {
    const key = pick(m.keys, t);
    return key === undefined ? undefined : { method: 'delete', path: `/api-keys/${key}` };
  })),
  fc.tuple(actorArb, perms).map(([a, p]) => new Operation('createRole', a, (m) => ({ method: 'post', path: '/roles', body: { name: `r${++m.counter}`, permissions: p }, after: async (res, model) => void model.roles.push({ id: res.body.id, name: res.body.name }) }))),
  fc.tuple(actorArb, targetArb, fc.subarray(UNIVERSE)).map(([a, t, p]) => new Operation('patchRole', a, (m) => {
    const role = pick(m.roles, t);
    return role === undefined ? undefined : { method: 'patch', path: `/roles/${role.id}`, body: { permissions: p } };
  })),
  fc.tuple(actorArb, targetArb).map(([a, t]) => new Operation('deleteRole', a, (m) => {
    const role = pick(m.roles, t);
    return role === undefined ? undefined : { method: 'delete', path: `/roles/${role.id}` };
  })),
  fc.tuple(actorArb, fc.uniqueArray(targetArb, { maxLength: 3 })).map(([a, picks]) => new Operation('createUser', a, (m) => ({
    method: 'post',
    path: '/users',
    body: { email: `u${++m.counter}@model.example`, first_name: 'Model', last_name: 'User', roles: [...new Set(picks.map((i) => pick(m.roles, i)!.name))] },
    after: async (res, model, r) => {
      model.users.push(res.body.id);
      model.actors.push(await signedIn(r, res.body.id));
    },
  }))),
  fc.tuple(actorArb, targetArb, fc.uniqueArray(targetArb, { maxLength: 3 }), fc.constantFrom(undefined, 'active', 'disabled')).map(([a, t, picks, status]) => new Operation('patchUser', a, (m) => {
    const user = pick(m.users, t);
    return user === undefined ? undefined : { method: 'patch', path: `/users/${user}`, body: { roles: [...new Set(picks.map((i) => pick(m.roles, i)!.name))], ...(status ? { status } : {}) } };
  })),
  fc.tuple(actorArb, targetArb).map(([a, t]) => new Operation('disableUser', a, (m) => {
    const user = pick(m.users, t);
    return user === undefined ? undefined : { method: 'delete', path: `/users/${user}` };
  })),
  fc.tuple(actorArb, targetArb).map(([a, t]) => new Operation('revokeSessions', a, (m) => {
    const user = pick(m.users, t);
    return user === undefined ? undefined : { method: 'delete', path: `/users/${user}/sessions` };
  })),
];

// ---------------------------------------------------------------------------------------------
// The initial state: random roles, users holding random sets of them (one administrator at
// least), keys with random permissions and creators (some wider than their creator now).

const initialState = fc.record({
  roles: fc.array(fc.subarray(UNIVERSE), { minLength: 2, maxLength: 4 }),
  // Indices into the roles above (1-based: 0 is the admin role, given to some users only).
  users: fc.array(
    fc.record({ admin: fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 3, arbitrary: fc.constant(false) }), roles: fc.uniqueArray(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 2 }) }),
    { minLength: 2, maxLength: 4 },
  ),
  keys: fc.array(fc.record({ permissions: perms, creator: fc.option(fc.nat({ max: 4 })) }), { minLength: 1, maxLength: 3 }),
});
type Initial = typeof initialState extends fc.Arbitrary<infer T> ? T : never;

/**
 * A session opened straight in the tables (no password hashing), then used through the real bearer
 * authenticator; stepped up (docs/AUTH.md, "Step-up": the model is about rights, not about proofs).
 */
async function signedIn(r: Real, userId: string): Promise<Actor> {
  const now = r.clock.now();
  const set = newTokenSet();
  const session = await r.db
    .insertInto('sessions')
    .values({ user_id: userId, ip_address: '127.0.0.1', user_agent: 'model', created_at: now, last_used_at: now, expires_at: new Date(now.getTime() + DAY), stepped_up_at: now, step_up_method: 'password' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await r.db
    .insertInto('session_tokens')
    .values({ session_id: session.id, generation: 1, access_digest: digestSecret(set.access_token), refresh_digest: digestSecret(set.refresh_token), issued_at: now })
    .execute();
  return { label: `user ${userId}`, kind: 'user', userId, sessionId: session.id, token: set.access_token };
}

async function seed(r: Real, init: Initial): Promise<Model> {
  const admin = { id: await adminRoleId(r.db), name: 'admin' };
  const roles = [admin];
  for (const p of init.roles) roles.push(await makeRole(r.db, p));
  const m: Model = { users: [], roles, keys: [], actors: [], counter: 0 };
  // The first user is an administrator; the others hold random roles (the admin role included).
  for (const [i, u] of [{ admin: true, roles: [] }, ...init.users].entries()) {
    const custom = u.roles.map((n) => roles[1 + ((n - 1) % (roles.length - 1))]!.id);
    const { id } = await makeUser(r.db, { email: `seed${i}@model.example`, roleIds: [...new Set([...(u.admin ? [admin.id] : []), ...custom])] });
    m.users.push(id);
    m.actors.push(await signedIn(r, id));
  }
  for (const [i, k] of init.keys.entries()) {
    const secret = generateSecret('bok');
    const createdBy = k.creator === null ? null : m.users[k.creator % m.users.length]!;
    const now = r.clock.now();
    const key = await r.db
      .insertInto('api_keys')
      .values(apiKeyRow({ name: `seed${i}`, permissions: k.permissions, display_prefix: secret.slice(0, 8), last_characters: secret.slice(-4), created_by: createdBy, created_at: now, updated_at: now, expires_at: new Date(now.getTime() + 7 * DAY) }))
      .returning('id')
      .executeTakeFirstOrThrow();
    await r.db.insertInto('api_key_secrets').values({ digest: digestSecret(secret), api_key_id: key.id, created_at: now }).execute();
    m.keys.push(key.id);
    m.actors.push({ label: `key ${key.id}`, kind: 'key', secret });
  }
  return m;
}

// One database and one server for the whole property: each run empties the tables it uses
// (creating a database per run costs a checkpoint each time).
let shared: { database: TestDatabase; server: Server; clock: ManualClock; tables: string[] } | undefined;
afterAll(async () => {
  if (!shared) return;
  await new Promise((done) => shared!.server.close(done));
  await shared.database.destroy();
});

async function freshState(): Promise<Real> {
  if (!shared) {
    const database = await createTestDatabase();
    const clock = new ManualClock(new Date());
    const server = createTestApp(database.db, { clock }).app.listen(0, '127.0.0.1');
    shared = { database, server, clock, tables: await tableNames(database.db) };
  }
  const { db } = shared.database;
  await sql`truncate users, api_keys, security_events cascade`.execute(db);
  await db.deleteFrom('roles').where('built_in', '=', false).execute();
  return { db, server: shared.server, clock: shared.clock, tables: shared.tables };
}

it(`no operation gives, prolongs or takes away a right its caller does not hold (${RUNS} runs of up to ${STEPS} steps)`, async () => {
  await fc.assert(
    fc.asyncProperty(initialState, fc.commands(commands, { maxCommands: STEPS }), async (init, cmds) => {
      const real = await freshState();
      const model = await seed(real, init);
      await fc.asyncModelRun(() => Promise.resolve({ model, real }), cmds);
    }),
    { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
  );
  if (process.env.AUTHORITY_MODEL_STATS) process.stdout.write(`${[...outcomes].sort().map(([k, n]) => `${n}\t${k}`).join('\n')}\n`);
  // Not vacuous: rights did change, and the rule did refuse.
  const count = (pattern: RegExp) => [...outcomes].filter(([k]) => pattern.test(k)).reduce((sum, [, n]) => sum + n, 0);
  expect(count(/ 2\d\d$/)).toBeGreaterThan(RUNS);
  expect(count(/target_outranks_caller/)).toBeGreaterThan(0);
}, 600_000);
