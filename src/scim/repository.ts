// The SCIM view of people: a user with their directory id (scim_external_ids) and the roles they
// hold (their groups), and the list a directory searches, limited to the people the caller may
// see (those holding no permission the caller lacks). An erased person (docs/ERASURE.md) is nobody
// a directory provisions: unknown to every SCIM operation, so no key brings a tombstone back to
// life (active, named, linked or given a role): erasing needs users.erase and cannot be undone.
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { Database } from '../db/schema.js';
import { isoMillis } from '../db/iso-time.js';
import { resourceId } from '../uuid.js';
import { ADMIN_ROLE_ID, PERMISSIONS } from '../auth/permissions.js';
import type { UserFilter } from './filter.js';

export interface ScimUserRow {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  status: 'active' | 'disabled';
  created_at: string;
  updated_at: string;
  version: number;
  external_id: string | null;
  groups: { value: string; display: string }[];
}

function selectScimUsers(db: Kysely<Database>) {
  return db
    .selectFrom('users as u')
    .leftJoin('scim_external_ids as x', 'x.user_id', 'u.id')
    .select(['u.id', 'u.email', 'u.first_name', 'u.last_name', 'u.status', 'u.version', 'x.external_id'])
    .select([isoMillis('u.created_at').as('created_at'), isoMillis('u.updated_at').as('updated_at')])
    .select(
      sql<{ value: string; display: string }[]>`coalesce((select json_agg(json_build_object('value', r.id, 'display', r.name) order by r.name)
        from user_roles ur join roles r on r.id = ur.role_id where ur.user_id = u.id), '[]'::json)`.as('groups'),
    );
}

export function findScimUser(db: Kysely<Database>, id: string): Promise<ScimUserRow | undefined> {
  return selectScimUsers(db).where('u.id', '=', id).where('u.erased_at', 'is', null).executeTakeFirst() as Promise<ScimUserRow | undefined>;
}

/**
 * Only people holding nothing the caller lacks (the SQL twin of assertMayActOn, src/auth/authority.ts):
 * no role of theirs grants a permission of the catalogue the caller lacks, and, unless the caller
 * holds the whole catalogue, none is the admin role (which grants the whole catalogue).
 */
function visibleTo(permissions: ReadonlySet<string>): Expression<SqlBool> | undefined {
  const lacked = PERMISSIONS.filter((p) => !permissions.has(p));
  if (lacked.length === 0) return undefined;
  return sql<SqlBool>`not exists (select 1 from user_roles ur where ur.user_id = u.id and (ur.role_id = ${ADMIN_ROLE_ID}
    or exists (select 1 from role_permissions rp where rp.role_id = ur.role_id and rp.permission = any(${lacked}::text[]))))`;
}

function condition(filter: UserFilter): Expression<SqlBool> {
  if (filter.op !== 'eq') {
    const parts = filter.filters.map(condition);
    return sql<SqlBool>`(${sql.join(parts, sql` ${sql.raw(filter.op)} `)})`;
  }
  switch (filter.attribute) {
    case 'userName':
      return sql<SqlBool>`u.email_key = ${filter.value}`;
    case 'externalId':
      return sql<SqlBool>`x.external_id = ${filter.value}`;
    case 'displayName':
      return sql<SqlBool>`trim(u.first_name || ' ' || u.last_name) = ${filter.value.trim()}`;
    case 'id': {
      const id = resourceId(filter.value);
      return id ? sql<SqlBool>`u.id = ${id}` : sql<SqlBool>`false`;
    }
    default:
      throw new Error('unreachable');
  }
}

/** A page of the people the caller may see (oldest first), and how many match in all. */
export async function listScimUsers(
  db: Kysely<Database>,
  options: { permissions: ReadonlySet<string>; filter?: UserFilter; offset: number; count: number },
): Promise<{ total: number; rows: ScimUserRow[] }> {
  const where = [sql<SqlBool>`u.erased_at is null`, visibleTo(options.permissions), options.filter && condition(options.filter)].filter((e): e is Expression<SqlBool> => e !== undefined);
  const restrict = <Q extends { where: (e: Expression<SqlBool>) => Q }>(query: Q) => where.reduce((q, e) => q.where(e), query);
  const counted = await restrict(db.selectFrom('users as u').leftJoin('scim_external_ids as x', 'x.user_id', 'u.id').select(sql<string>`count(*)`.as('total'))).executeTakeFirstOrThrow();
  const rows = options.count === 0 ? [] : await restrict(selectScimUsers(db)).orderBy('u.created_at').orderBy('u.id').offset(options.offset).limit(options.count).execute();
  return { total: Number(counted.total), rows: rows as ScimUserRow[] };
}

/** Sets (or, with null, removes) the person's directory id; true when it changed. */
export async function setExternalId(db: Kysely<Database>, userId: string, externalId: string | null, now: Date): Promise<boolean> {
  if (externalId === null) {
    const deleted = await db.deleteFrom('scim_external_ids').where('user_id', '=', userId).executeTakeFirst();
    return Number(deleted.numDeletedRows) > 0;
  }
  const written = await db
    .insertInto('scim_external_ids')
    .values({ user_id: userId, external_id: externalId, updated_at: now })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ external_id: externalId, updated_at: now }).where('scim_external_ids.external_id', '<>', externalId))
    .executeTakeFirst();
  return Number(written.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** A member of a group (a holder of a role) as SCIM lists them. */
export interface GroupMemberRow {
  role_id: string;
  id: string;
  first_name: string;
  last_name: string;
}

/** The holders of these roles whom the caller may see (visibleTo), oldest first. */
export async function visibleMembersOfRoles(db: Kysely<Database>, roleIds: readonly string[], permissions: ReadonlySet<string>): Promise<GroupMemberRow[]> {
  if (roleIds.length === 0) return [];
  const visible = visibleTo(permissions);
  let query = db
    .selectFrom('user_roles as ur')
    .innerJoin('users as u', 'u.id', 'ur.user_id')
    .select(['ur.role_id', 'u.id', 'u.first_name', 'u.last_name'])
    .where('ur.role_id', 'in', [...roleIds])
    .where('u.erased_at', 'is', null);
  if (visible) query = query.where(visible);
  return query.orderBy('u.created_at').orderBy('u.id').execute();
}

/**
 * Which of these people exist and the caller may see (visibleTo), read without locking anyone: a
 * request checks this before it locks, so a person it may not see is never locked (nor their
 * sign-ins, which read the row FOR SHARE, held up) and costs what an unknown id costs.
 */
export async function visibleUsers(db: Kysely<Database>, ids: readonly string[], permissions: ReadonlySet<string>): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const visible = visibleTo(permissions);
  let query = db.selectFrom('users as u').select('u.id').where('u.id', 'in', [...ids]).where('u.erased_at', 'is', null);
  if (visible) query = query.where(visible);
  return new Set((await query.execute()).map((r) => r.id));
}

/**
 * Locks these people's rows FOR UPDATE, and `shared` (a key's creator, whose rights the request
 * acts on) FOR SHARE unless it is among them, all in id order, so two requests never wait on each
 * other in a circle; the ids found among `ids`.
 */
export async function lockUsers(db: Kysely<Database>, ids: readonly string[], shared?: string | null): Promise<Set<string>> {
  const all = [...new Set(ids)];
  const forUpdate = (where: (id: string) => boolean) => {
    const chosen = all.filter(where);
    // An erased person is not found (re-checked once their row's lock is had, so an erasure committed meanwhile counts).
    return chosen.length === 0 ? Promise.resolve([]) : db.selectFrom('users').select('id').where('id', 'in', chosen).where('erased_at', 'is', null).orderBy('id').forUpdate().execute();
  };
  if (!shared || all.includes(shared)) return new Set((await forUpdate(() => true)).map((r) => r.id));
  // uuid order in PostgreSQL is the order of their lower-case text.
  const before = await forUpdate((id) => id < shared);
  await db.selectFrom('users').select('id').where('id', '=', shared).forShare().execute();
  const after = await forUpdate((id) => id > shared);
  return new Set([...before, ...after].map((r) => r.id));
}
