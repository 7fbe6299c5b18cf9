// Queries on the users table. Functions take the database or a transaction.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, UsersTable } from '../db/schema.js';
import type { UserCursor } from './cursor.js';
import { fixedStatementsByShape } from '../db/fixed-statement.js';
import { userRevision } from '../revisions/revisions.js';
import { uniqueNameKey } from '../text/normalize.js';
import { emailKey } from './names.js';
import { isoMicros, isoMillis } from '../db/iso-time.js';

export type UserRow = Selectable<UsersTable>;
/**
 * A user as the API shows it: no password hash, timestamps already in ISO 8601 (formatted by
 * PostgreSQL: a page of 50 users would otherwise parse and re-print 150 dates in the event loop),
 * role names, and the exact sort key for the cursor.
 */
export type ListedUser = Omit<UserRow, 'password_hash' | 'email_key' | 'created_at' | 'updated_at' | 'last_sign_in_at' | 'must_change_password' | 'version' | 'erased_at' | 'known_devices' | 'known_devices_key_id' | 'language'> & {
  /** When the person was erased (docs/ERASURE.md); null or absent for everyone else. */
  erased_at?: string | null;
  created_at: string;
  updated_at: string;
  last_sign_in_at: string | null;
  roles: string[];
  cursor_created_at: string;
};

export interface UserFilter {
  status?: 'active' | 'disabled';
  role?: string;
  search?: string;
}

/** LIKE treats % and _ as wildcards; a search is for the text as typed. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function selectListed(db: Kysely<Database>) {
  return db
    .selectFrom('users as u')
    .select(['u.id', 'u.email', 'u.first_name', 'u.last_name', 'u.status'])
    .select([isoMillis('u.created_at').as('created_at'), isoMillis('u.updated_at').as('updated_at'), isoMillis('u.last_sign_in_at').as('last_sign_in_at'), isoMillis('u.erased_at').as('erased_at')])
    .select(isoMicros('u.created_at').as('cursor_created_at'))
    .select(
      sql<string[]>`array(select r.name from user_roles ur join roles r on r.id = ur.role_id where ur.user_id = u.id order by r.name)`.as('roles'),
    );
}

interface PageParameters {
  limit: number;
  afterCreatedAt: string;
  afterId: string;
  status: string;
  role: string;
  pattern: string;
}

/** The page query for one combination of cursor and filters, its values left as parameters. */
function pageQuery(db: Kysely<Database>, shape: { after: boolean; status: boolean; role: boolean; search: boolean }, p: PageParameters) {
  let query = selectListed(db);
  if (shape.after) query = query.where(sql<boolean>`(u.created_at, u.id) > (${p.afterCreatedAt}::timestamptz, ${p.afterId}::uuid)`);
  if (shape.status) query = query.where('u.status', '=', p.status as 'active' | 'disabled');
  if (shape.role) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('user_roles as ur')
          .innerJoin('roles as r', 'r.id', 'ur.role_id')
          .select('ur.user_id')
          .whereRef('ur.user_id', '=', 'u.id')
          .where('r.name_key', '=', p.role),
      ),
    );
  }
  if (shape.search) {
    query = query.where((eb) =>
      eb.or([
        eb('u.email', 'ilike', p.pattern),
        eb('u.first_name', 'ilike', p.pattern),
        eb('u.last_name', 'ilike', p.pattern),
        eb(sql<string>`u.first_name || ' ' || u.last_name`, 'ilike', p.pattern),
      ]),
    );
  }
  return query.orderBy('u.created_at').orderBy('u.id').limit(p.limit);
}

// Each of the 16 combinations of cursor and filters is compiled the first time it is asked for.
const pageStatement = fixedStatementsByShape((shape: { after: boolean; status: boolean; role: boolean; search: boolean }) => (db, p: PageParameters) => pageQuery(db, shape, p));

/** The first page, unfiltered: what `GET /users` runs most (bench/ runs this text). */
export const firstPage = pageStatement({ after: false, status: false, role: false, search: false });

/** One page in (created_at, id) order, walking the (created_at, id) index from the cursor; `limit + 1` rows tell whether more follow. */
export function listUsersPage(db: Kysely<Database>, options: { limit: number; after?: UserCursor; filter?: UserFilter }): Promise<ListedUser[]> {
  const { after, filter = {} } = options;
  const statement = pageStatement({ after: after !== undefined, status: Boolean(filter.status), role: Boolean(filter.role), search: Boolean(filter.search) });
  return statement.execute(db, {
    limit: options.limit + 1,
    afterCreatedAt: after?.createdAt ?? '',
    afterId: after?.id ?? '',
    status: filter.status ?? '',
    role: filter.role ? uniqueNameKey(filter.role.trim()) : '',
    pattern: filter.search ? likePattern(filter.search) : '',
  });
}

/** A user as shown, with its revision (what its entity tag is made of). */
export type ShownUser = ListedUser & { revision: string };

export function findListedUser(db: Kysely<Database>, id: string): Promise<ShownUser | undefined> {
  return selectListed(db).select(userRevision('u').as('revision')).where('u.id', '=', id).executeTakeFirst();
}

/** The user's current revision (read under the lock of a change, to check its If-Match). */
export async function findUserRevision(db: Kysely<Database>, id: string): Promise<string | undefined> {
  return (await db.selectFrom('users as u').select(userRevision('u').as('revision')).where('u.id', '=', id).executeTakeFirst())?.revision;
}

export function lockUser(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * Locks the user's row FOR SHARE until the transaction ends, for a check on what the user holds
 * that must stay true until the change it allows is written: changes of the user's roles and
 * status (which take FOR UPDATE) wait, and this waits for one in progress. False when no user has
 * this id.
 */
export async function lockUserForShare(db: Kysely<Database>, id: string): Promise<boolean> {
  return (await db.selectFrom('users').select('id').where('id', '=', id).forShare().executeTakeFirst()) !== undefined;
}

export async function insertUser(
  db: Kysely<Database>,
  user: { email: string; first_name: string; last_name: string; password_hash: string | null; must_change_password: boolean; now: Date },
): Promise<string> {
  const { now, ...values } = user;
  const row = await db
    .insertInto('users')
    .values({ ...values, email_key: emailKey(values.email), created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateUserFields(
  db: Kysely<Database>,
  id: string,
  fields: { first_name?: string; last_name?: string; status?: 'active' | 'disabled'; now: Date },
): Promise<void> {
  const { now, ...rest } = fields;
  await db.updateTable('users').set({ ...rest, updated_at: now }).where('id', '=', id).execute();
}

/** The language the person chose for the messages sent to them; null when none (or no such user). */
export async function languageOf(db: Kysely<Database>, id: string): Promise<'en' | 'fr' | null> {
  return (await db.selectFrom('users').select('language').where('id', '=', id).executeTakeFirst())?.language ?? null;
}

/**
 * Sets the person's language when it is another than theirs: the one it was, or undefined when
 * nothing changed (the same language, or no active user of this id). The row is read locked, so
 * of two changes at once each sees the other's result.
 */
export async function setLanguage(db: Kysely<Database>, id: string, language: 'en' | 'fr' | null): Promise<{ before: 'en' | 'fr' | null } | undefined> {
  const row = await db.selectFrom('users').select('language').where('id', '=', id).where('status', '=', 'active').forUpdate().executeTakeFirst();
  if (!row || row.language === language) return undefined;
  await db.updateTable('users').set({ language }).where('id', '=', id).execute();
  return { before: row.language };
}

/**
 * The statuses of these users (lower-case ids), their rows locked FOR SHARE until the transaction ends (in id
 * order), so none is disabled between the check that they are active and the write that names
 * them: a task's assignee, a meeting's organizer and attendees. Users not found are absent from
 * the answer.
 */
export async function lockUserStatuses(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, 'active' | 'disabled'>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'status']).where('id', 'in', [...ids]).orderBy('id').forShare().execute();
  return new Map(rows.map((r) => [r.id, r.status]));
}
