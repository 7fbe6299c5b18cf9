// Users, roles and API keys made straight in a test database, and a stand-in for the bearer
// authenticator used where a test needs a signed-in caller but is about
// something else. The authorization matrix uses the real sign-in flow instead.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { Authenticators, Principal } from '../../src/auth/principal.js';
import type { Dependencies } from '../../src/dependencies.js';
import { buildServices } from '../../src/composition.js';
import { ApiKeyService } from '../../src/api-keys/service.js';
import { OPERATOR } from '../../src/auth/authority.js';
import { rolesOfUser } from '../../src/roles/repository.js';
import { permissionsOfRoles } from '../../src/roles/permissions.js';
import { refused } from '../../src/errors.js';
import { ManualClock, systemClock, type Clock } from '../../src/clock.js';
import { createTestApp, spec, testConfig } from './context.js';
import { keyring } from '../../src/auth/secrets/sealing-keys.js';
import { sealClientSecret } from '../../src/auth/identity-providers/client-secret.js';
import { roleRow, userRow } from './rows.js';

export async function makeRole(db: Kysely<Database>, permissions: readonly string[], name = `role-${randomUUID().slice(0, 8)}`) {
  const role = await db.insertInto('roles').values(roleRow({ name })).returning('id').executeTakeFirstOrThrow();
  if (permissions.length > 0) await db.insertInto('role_permissions').values(permissions.map((permission) => ({ role_id: role.id, permission }))).execute();
  return { id: role.id, name };
}

export async function adminRoleId(db: Kysely<Database>): Promise<string> {
  return (await db.selectFrom('roles').select('id').where('name', '=', 'admin').executeTakeFirstOrThrow()).id;
}

export async function makeUser(
  db: Kysely<Database>,
  options: { email?: string; roleIds?: string[]; passwordHash?: string | null; createdAt?: Date } = {},
) {
  const email = options.email ?? `user-${randomUUID().slice(0, 8)}@example.com`;
  const user = await db
    .insertInto('users')
    .values(userRow({ email, first_name: 'Test', last_name: 'User', password_hash: options.passwordHash ?? null, ...(options.createdAt ? { created_at: options.createdAt, updated_at: options.createdAt } : {}) }))
    .returning('id')
    .executeTakeFirstOrThrow();
  if (options.roleIds?.length) await db.insertInto('user_roles').values(options.roleIds.map((role_id) => ({ user_id: user.id, role_id }))).execute();
  return { id: user.id, email };
}

/** A meeting organised (and attended) by a new user, written straight in the database. */
export async function makeMeeting(db: Kysely<Database>, options: { startsAt?: Date; minutes?: number; organizerId?: string } = {}) {
  const organizerId = options.organizerId ?? (await makeUser(db)).id;
  const startsAt = options.startsAt ?? new Date('2026-12-15T09:00:00Z');
  const endsAt = new Date(startsAt.getTime() + (options.minutes ?? 60) * 60_000);
  const meeting = await db
    .insertInto('meetings')
    .values({ title: `meeting-${randomUUID().slice(0, 8)}`, description: null, location: null, starts_at: startsAt, ends_at: endsAt, organizer_id: organizerId, created_by_user_id: organizerId, created_by_api_key_id: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('meeting_attendees').values({ meeting_id: meeting.id, user_id: organizerId, starts_at: startsAt, ends_at: endsAt }).execute();
  return { id: meeting.id, organizerId };
}

/** A task, created by a new user of its own (straight in the table). */
export async function makeTask(db: Kysely<Database>, options: { title?: string; assigneeId?: string } = {}) {
  const creator = await makeUser(db);
  const task = await db
    .insertInto('tasks')
    .values({ title: options.title ?? `task-${randomUUID().slice(0, 8)}`, created_by_user_id: creator.id, assignee_id: options.assigneeId ?? null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: task.id, creatorId: creator.id };
}

/** An API key issued from the operator's side (no creator), holding exactly `permissions`. */
export async function makeApiKey(db: Kysely<Database>, permissions: string[], options: { clock?: Clock; expiresAt?: string; name?: string } = {}) {
  const service = new ApiKeyService({ db, clock: options.clock ?? systemClock });
  const draft = service.draft(OPERATOR, { name: options.name ?? `key-${randomUUID().slice(0, 8)}`, permissions, expires_at: options.expiresAt });
  const { key, secret } = await db.transaction().execute((trx) => service.create(trx, OPERATOR, draft));
  return { id: key.id, secret, service };
}

/**
 * The real API-key authenticator, and a bearer stand-in: `Bearer test-user:<userId>` is that user,
 * with the permissions of their roles read on every request (as the real one must do). It has no
 * session, so it counts as freshly stepped up (docs/AUTH.md, "Step-up"): the tests that use it are
 * about something else; test/step-up.test.ts signs in for real.
 */
export function authenticatorsWithTestBearer(deps: Dependencies): Authenticators {
  const real = buildServices(deps).authenticators;
  return {
    apiKey: real.apiKey,
    spendKeyUse: real.spendKeyUse,
    async bearer(token): Promise<Principal> {
      const userId = /^test-user:(.+)$/.exec(token)?.[1];
      if (!userId) throw refused('invalid_token', 'Unknown test token.');
      // A session id shaped like a real one: audit events store the actor's session as a uuid.
      return { kind: 'user', userId, sessionId: TEST_SESSION_ID, permissions: permissionsOfRoles(await rolesOfUser(deps.db, userId)) };
    },
    async stepUp() {},
  };
}

export const testBearer = (userId: string) => `Bearer test-user:${userId}`;
export const TEST_SESSION_ID = '00000000-0000-4000-8000-00000000e55e';

/** The real app whose bearer path is the stand-in above; both share one manual clock. */
export function createAppWithTestBearer(db: Kysely<Database>, clock: ManualClock = new ManualClock(new Date())) {
  const { deps } = createTestApp(db, { clock });
  return createTestApp(db, { clock, authenticators: authenticatorsWithTestBearer(deps) });
}

/** A webhook endpoint row (its secret is never used: for tests about who may call), on loopback, owned by a new person. */
export async function makeWebhookEndpoint(db: Kysely<Database>) {
  const now = new Date();
  const owner = await makeUser(db);
  return db
    .insertInto('webhook_endpoints')
    .values({ url: 'http://127.0.0.1:9/hook', description: null, event_types: ['task.created'], secret_sealed: Buffer.alloc(60), created_by_user_id: owner.id, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/**
 * A delivery of a `task.created` event to a new endpoint: the endpoint's id and the delivery's. The
 * event is the contract's own example of the type (a new id, now), so that the feed and the
 * deliveries that show it answer as the contract says.
 */
export async function makeWebhookDelivery(db: Kysely<Database>): Promise<{ endpointId: string; deliveryId: string }> {
  const endpoint = await makeWebhookEndpoint(db);
  const media = (spec as unknown as { webhooks: Record<string, { post: { requestBody: { content: Record<string, { example: Record<string, unknown> }> } } }> }).webhooks['task.created']!.post.requestBody.content['application/json']!;
  const id = randomUUID();
  const occurredAt = new Date();
  const event = await db
    .insertInto('events')
    .values({ id, type: 'task.created', occurred_at: occurredAt, audit_event_id: null, required_permission: 'tasks.read', payload: JSON.stringify({ ...media.example, id, occurred_at: occurredAt.toISOString() }) })
    .returning('id')
    .executeTakeFirstOrThrow();
  const delivery = await db.insertInto('webhook_deliveries').values({ endpoint_id: endpoint.id, event_id: event.id, created_at: new Date() }).returning('id').executeTakeFirstOrThrow();
  return { endpointId: endpoint.id, deliveryId: delivery.id };
}

/** A passkey row of `userId` (its key is never used: for tests about who may call). */
export async function makePasskey(db: Kysely<Database>, userId: string): Promise<string> {
  const row = await db
    .insertInto('second_factors')
    .values({ user_id: userId, kind: 'passkey', name: 'Matrix', created_at: new Date(), confirmed_at: new Date(), credential_id: randomUUID(), public_key: Buffer.alloc(77), sign_count: 0, backup_eligible: false, backup_state: false })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * An identity provider of `issuer`, answering for `domains`, its client secret `fixture-secret`
 * sealed under the tests' sealing keys (SEALING_KEYS, as a server process of the tests reads them).
 */
export async function makeIdentityProvider(db: Kysely<Database>, issuer: string, domains: string[] = [], client = { id: 'fixture', secret: 'fixture-secret' }): Promise<string> {
  const id = randomUUID();
  const now = new Date();
  const sealed = sealClientSecret(keyring(testConfig().sealingKeys!), id, client.secret);
  await db
    .insertInto('identity_providers')
    .values({ id, name: `idp ${id}`, name_key: `idp ${id}`, issuer, client_id: client.id, ...sealed, scopes: ['openid'], groups_claim: 'groups', create_unknown_people: false, sso_required: false, second_factor_amr: [], second_factor_acr: [], created_at: now, updated_at: now })
    .execute();
  if (domains.length) await db.insertInto('identity_provider_domains').values(domains.map((domain) => ({ domain, provider_id: id }))).execute();
  return id;
}
