// Queries on identity providers, their domains and role mappings, the links of people to a
// provider's subjects, and the sign-in flows in progress. Functions take the database or a transaction.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database, IdentityProvidersTable } from '../../db/schema.js';

type Db = Kysely<Database>;

export type ProviderRow = Selectable<IdentityProvidersTable>;
export interface RoleMapping {
  group: string;
  roles: string[];
}
/**
 * A provider as shown and as the sign-in uses it: its domains and mappings (by role name) beside
 * the row, and its revision (what its entity tag is made of).
 */
export type Provider = ProviderRow & { domains: string[]; role_mappings: RoleMapping[]; revision: string };

/**
 * A provider (`p`): its version (moved by every change of the service, its domains and mappings
 * included), and the id and version of each role it maps, since it shows their names: a role
 * renamed or deleted changes the representation with no write to the provider.
 */
export const providerRevision = sql<string>`p.version::text || coalesce((
  select ';' || string_agg(x.v, ';' order by x.v)
  from (select distinct r.id::text || '.' || r.version::text as v
        from identity_provider_role_mappings m join roles r on r.id = m.role_id where m.provider_id = p.id) x), '')`;

function withDomainsAndMappings(db: Db) {
  return db
    .selectFrom('identity_providers as p')
    .selectAll('p')
    .select([
      providerRevision.as('revision'),
      sql<string[]>`coalesce((select array_agg(d.domain order by d.domain) from identity_provider_domains d where d.provider_id = p.id), '{}')`.as('domains'),
      sql<RoleMapping[]>`coalesce((
        select json_agg(json_build_object('group', g.group_name, 'roles', g.roles) order by g.group_name)
        from (select m.group_name, array_agg(r.name order by r.name_key) as roles
              from identity_provider_role_mappings m join roles r on r.id = m.role_id
              where m.provider_id = p.id group by m.group_name) g), '[]'::json)`.as('role_mappings'),
    ]);
}

/**
 * One page of providers in their list's order (name_key, then id; name_key is unique, its index
 * serves the walk), from after a cursor's position; `limit + 1` rows tell whether more follow.
 */
export function listProvidersPage(db: Db, options: { limit: number; after?: { key: string; id: string } }): Promise<Provider[]> {
  let query = withDomainsAndMappings(db);
  const { after } = options;
  if (after) query = query.where(sql<boolean>`(p.name_key, p.id) > (${after.key}, ${after.id}::uuid)`);
  return query.orderBy('p.name_key').orderBy('p.id').limit(options.limit + 1).execute();
}

/** The provider's current revision (read under the lock of a change, to check its If-Match). */
export async function findProviderRevision(db: Db, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('identity_providers as p').select(providerRevision.as('revision')).where('p.id', '=', id).executeTakeFirst();
  return row?.revision;
}

export const findProvider = (db: Db, id: string): Promise<Provider | undefined> => withDomainsAndMappings(db).where('p.id', '=', id).executeTakeFirst();

/** The provider answering for an e-mail domain. */
export const findProviderByDomain = (db: Db, domain: string): Promise<Provider | undefined> =>
  withDomainsAndMappings(db).where('p.id', '=', (eb) => eb.selectFrom('identity_provider_domains').select('provider_id').where('domain', '=', domain)).executeTakeFirst();

export async function lockProvider(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('identity_providers').select('id').where('id', '=', id).forUpdate().executeTakeFirst()) !== undefined;
}

/** The names of the roles a provider maps (to lock and judge them). */
export async function mappedRoleNames(db: Db, providerId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('identity_provider_role_mappings as m')
    .innerJoin('roles as r', 'r.id', 'm.role_id')
    .select('r.name')
    .distinct()
    .where('m.provider_id', '=', providerId)
    .execute();
  return rows.map((r) => r.name);
}

export async function replaceDomains(db: Db, providerId: string, domains: readonly string[]): Promise<void> {
  await db.deleteFrom('identity_provider_domains').where('provider_id', '=', providerId).execute();
  if (domains.length) await db.insertInto('identity_provider_domains').values(domains.map((domain) => ({ domain, provider_id: providerId }))).execute();
}

export async function replaceMappings(db: Db, providerId: string, mappings: readonly { group: string; roleIds: string[] }[]): Promise<void> {
  await db.deleteFrom('identity_provider_role_mappings').where('provider_id', '=', providerId).execute();
  const rows = mappings.flatMap((m) => m.roleIds.map((role_id) => ({ provider_id: providerId, group_name: m.group, role_id })));
  if (rows.length) await db.insertInto('identity_provider_role_mappings').values(rows).onConflict((oc) => oc.doNothing()).execute();
}

/** group -> role ids, for the sign-in. */
export async function mappingsOf(db: Db, providerId: string): Promise<{ group_name: string; role_id: string }[]> {
  return db.selectFrom('identity_provider_role_mappings').select(['group_name', 'role_id']).where('provider_id', '=', providerId).execute();
}

/** A link is the provider's: the same subject of an issuer another provider shares (Google) is not it. */
export async function findLink(db: Db, providerId: string, issuer: string, subject: string) {
  return db.selectFrom('identity_links').selectAll().where('provider_id', '=', providerId).where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
}

export async function findLinkOfUser(db: Db, userId: string, issuer: string) {
  return db.selectFrom('identity_links').selectAll().where('user_id', '=', userId).where('issuer', '=', issuer).executeTakeFirst();
}

/** False when the subject or the person is linked already (a simultaneous sign-in took the place). */
export async function insertLink(db: Db, link: { issuer: string; subject: string; userId: string; providerId: string; now: Date }): Promise<boolean> {
  const row = await db
    .insertInto('identity_links')
    .values({ issuer: link.issuer, subject: link.subject, user_id: link.userId, provider_id: link.providerId, created_at: link.now, last_sign_in_at: link.now })
    .onConflict((oc) => oc.doNothing())
    .returning('subject')
    .executeTakeFirst();
  return row !== undefined;
}

export async function touchLink(db: Db, issuer: string, subject: string, now: Date): Promise<void> {
  await db.updateTable('identity_links').set({ last_sign_in_at: now }).where('issuer', '=', issuer).where('subject', '=', subject).execute();
}

export async function insertFlow(
  db: Db,
  flow: { stateDigest: Buffer; flowDigest: Buffer; providerId: string; codeVerifier: string; nonce: string; redirectUri: string; now: Date; expiresAt: Date; stepUpSessionId?: string },
): Promise<void> {
  await db
    .insertInto('oidc_sign_in_flows')
    .values({
      state_digest: flow.stateDigest,
      flow_digest: flow.flowDigest,
      provider_id: flow.providerId,
      code_verifier: flow.codeVerifier,
      nonce: flow.nonce,
      redirect_uri: flow.redirectUri,
      created_at: flow.now,
      expires_at: flow.expiresAt,
      step_up_session_id: flow.stepUpSessionId ?? null,
    })
    .execute();
}

/**
 * Keeps a step-up flow unless its session already holds `max` live ones (not the address's count:
 * strangers starting sign-ins from the office's address must not block a step-up). The session's
 * row locked first, in the caller's transaction (one connection), so parallel starts of one
 * session are counted one after the other. False when the budget is spent (or the session gone).
 */
export async function insertStepUpFlowWithin(trx: Transaction<Database>, flow: Parameters<typeof insertFlow>[1] & { stepUpSessionId: string }, max: number): Promise<boolean> {
  const session = await trx.selectFrom('sessions').select('id').where('id', '=', flow.stepUpSessionId).forUpdate().executeTakeFirst();
  if (!session) return false;
  const live = await trx
    .selectFrom('oidc_sign_in_flows')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('step_up_session_id', '=', flow.stepUpSessionId)
    .where('expires_at', '>', flow.now)
    .executeTakeFirstOrThrow();
  if (Number(live.n) >= max) return false;
  await insertFlow(trx, flow);
  return true;
}

/**
 * Takes the flow of a state out, whatever comes next: one statement, so of two callbacks racing
 * with the same state exactly one gets it, on any process. Undefined when unknown or used.
 */
export function takeFlow(db: Db, stateDigest: Buffer) {
  return db.deleteFrom('oidc_sign_in_flows').where('state_digest', '=', stateDigest).returningAll().executeTakeFirst();
}

/** The links of a person, the most recently used first (a step-up re-authenticates through the first). */
export function linksOfUser(db: Db, userId: string) {
  return db.selectFrom('identity_links').selectAll().where('user_id', '=', userId).orderBy('last_sign_in_at', 'desc').execute();
}

/** The sweep: flows past their time. */
export async function deleteExpiredFlows(db: Db, now: Date): Promise<number> {
  const result = await db.deleteFrom('oidc_sign_in_flows').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
