// Queries on the tasks table. Functions take the database or a transaction.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { creatorRevision } from '../revisions/revisions.js';
import type { Database } from '../db/schema.js';
import type { TaskPriority, TaskStatus } from './table.js';
import { fixedStatementsByShape } from '../db/fixed-statement.js';
import { changedAt } from '../db/versions.js';
import type { TaskCursor, TaskSort } from './cursor.js';
import { isoMicros, isoMillis } from '../db/iso-time.js';

/** The writable fields, as stored (times in ISO 8601). */
export interface TaskFields {
  title: string;
  description: string | null;
  status: TaskStatus;
  priority: TaskPriority;
  due_at: string | null;
  assignee_id: string | null;
}

/**
 * A task as the API shows it: timestamps already in ISO 8601 (formatted by PostgreSQL, as for
 * users), the assignee's and the creator's names and the assignee's status read at the same time,
 * and the exact sort key of the page's order for the cursor.
 */
export interface ListedTask extends TaskFields {
  id: string;
  assignee_label: string | null;
  assignee_status: 'active' | 'disabled' | null;
  created_by_type: 'user' | 'api_key';
  created_by_id: string;
  created_by_label: string;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  cursor_key: string;
}

/** What the service reads under the row lock before changing a task. */
export type LockedTask = TaskFields & { id: string; completed_at: string | null };

export interface TaskFilter {
  statuses?: readonly TaskStatus[];
  assigneeId?: string;
  dueBefore?: string;
  dueAfter?: string;
  search?: string;
}

/**
 * The LIKE pattern of titles containing `text` as typed, folded as the titles are. The folding
 * comes before the escaping of LIKE's \, % and _ because unaccent folds the full-width ％ ＿ ＼
 * (and others) into them: escaped first, they would come out of the folding as wildcards.
 */
const containing = (text: string) => sql<string>`'%' || replace(replace(replace(fold_for_search(${text}), '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%'`;

/**
 * The order's key: the creation time, or the due date with a missing one as 'infinity' (last).
 * The same expressions as the indexes of migration 20261210T1000_tasks, so they serve the order.
 */
const SORT_KEY: Record<TaskSort, RawBuilder<Date>> = {
  created_at: sql`t.created_at`,
  due_at: sql`coalesce(t.due_at, 'infinity'::timestamptz)`,
};
/** The key to the microsecond ('infinity' as such): a millisecond would skip or repeat rows. */
const CURSOR_KEY: Record<TaskSort, RawBuilder<string>> = {
  created_at: isoMicros('t.created_at'),
  due_at: sql`coalesce(${isoMicros('t.due_at')}, 'infinity')`,
};

/**
 * The names beside the task are read by subqueries of the select list, one index probe each for
 * the page's rows only, rather than joins: with joins, the planner may hash the whole users table
 * for a page deep in the list (measured: 5.6 ms instead of 0.5 ms with 2,000 users), whereas here
 * every page is the same walk of the order's index, stopped by the LIMIT.
 */
function selectListed(db: Kysely<Database>, sort: TaskSort) {
  return db
    .selectFrom('tasks as t')
    .select(['t.id', 't.title', 't.description', 't.status', 't.priority', 't.assignee_id'])
    .select([
      isoMillis('t.due_at').as('due_at'),
      sql<string | null>`(select a.first_name || ' ' || a.last_name from users a where a.id = t.assignee_id)`.as('assignee_label'),
      sql<'active' | 'disabled' | null>`(select a.status from users a where a.id = t.assignee_id)`.as('assignee_status'),
      sql<'user' | 'api_key'>`case when t.created_by_user_id is not null then 'user' else 'api_key' end`.as('created_by_type'),
      sql<string>`coalesce(t.created_by_user_id, t.created_by_api_key_id)`.as('created_by_id'),
      sql<string>`coalesce((select u.first_name || ' ' || u.last_name from users u where u.id = t.created_by_user_id), (select k.name from api_keys k where k.id = t.created_by_api_key_id))`.as('created_by_label'),
      isoMillis('t.created_at').as('created_at'),
      isoMillis('t.updated_at').as('updated_at'),
      isoMillis('t.completed_at').as('completed_at'),
      CURSOR_KEY[sort].as('cursor_key'),
    ]);
}

interface PageParameters {
  limit: number;
  afterKey: string;
  afterId: string;
  statuses: readonly string[];
  assigneeId: string;
  dueBefore: string;
  dueAfter: string;
  search: string;
}

interface PageShape {
  sort: TaskSort;
  after: boolean;
  statuses: boolean;
  assignee: boolean;
  dueBefore: boolean;
  dueAfter: boolean;
  search: boolean;
}

/** The page query for one combination of order, cursor and filters, its values left as parameters. */
function pageQuery(db: Kysely<Database>, shape: PageShape, p: PageParameters) {
  const key = SORT_KEY[shape.sort];
  let query = selectListed(db, shape.sort);
  if (shape.after) query = query.where(sql<boolean>`(${key}, t.id) > (${p.afterKey}::timestamptz, ${p.afterId}::uuid)`);
  if (shape.statuses) query = query.where(sql<boolean>`t.status = any(${p.statuses}::text[])`);
  if (shape.assignee) query = query.where(sql<boolean>`t.assignee_id = ${p.assigneeId}::uuid`);
  // Written on the due-date key (equal for tasks that have a due date; 'infinity' is never before
  // anything), so that the due-date index serves the range as well as the order.
  if (shape.dueBefore) query = query.where(sql<boolean>`${SORT_KEY.due_at} < ${p.dueBefore}::timestamptz`);
  if (shape.dueAfter) query = query.where(sql<boolean>`${SORT_KEY.due_at} >= ${p.dueAfter}::timestamptz and t.due_at is not null`);
  if (shape.search) query = query.where(sql<boolean>`fold_for_search(t.title) like ${containing(p.search)}`);
  return query.orderBy(key).orderBy('t.id').limit(p.limit);
}

// Each combination of order, cursor and filters is compiled the first time it is asked for.
const pageStatement = fixedStatementsByShape((shape: PageShape) => (db, p: PageParameters) => pageQuery(db, shape, p));

const NO_FILTER = { after: false, statuses: false, assignee: false, dueBefore: false, dueAfter: false, search: false };

/** The first page, unfiltered, in the default order: what `GET /tasks` runs most (bench/ runs this text). */
export const firstPage = pageStatement({ sort: 'created_at', ...NO_FILTER });
/** A later page, unfiltered, in the default order (bench/ runs this text for the deep page). */
export const laterPage = pageStatement({ sort: 'created_at', ...NO_FILTER, after: true });

/** A first page searched by title (test/tasks-list.test.ts checks that its plan reads the trigram index). */
export const titleSearchPage = pageStatement({ sort: 'created_at', ...NO_FILTER, search: true });

/** One page, walking the order's index from the cursor; `limit + 1` rows tell whether more follow. */
export function listTasksPage(db: Kysely<Database>, options: { limit: number; sort: TaskSort; after?: TaskCursor; filter: TaskFilter }): Promise<ListedTask[]> {
  const { after, filter } = options;
  const statement = pageStatement({
    sort: options.sort,
    after: after !== undefined,
    statuses: filter.statuses !== undefined,
    assignee: filter.assigneeId !== undefined,
    dueBefore: filter.dueBefore !== undefined,
    dueAfter: filter.dueAfter !== undefined,
    search: filter.search !== undefined,
  });
  return statement.execute(db, {
    limit: options.limit + 1,
    afterKey: after?.key ?? '',
    afterId: after?.id ?? '',
    statuses: filter.statuses ?? [],
    assigneeId: filter.assigneeId ?? '',
    dueBefore: filter.dueBefore ?? '',
    dueAfter: filter.dueAfter ?? '',
    search: filter.search ?? '',
  });
}

/** A task (`t`): its version, its assignee's (name and status shown), its creator's. */
export const taskRevision = sql<string>`t.version::text || '/' || coalesce((select a.version::text from users a where a.id = t.assignee_id), '')
  || '/' || ${creatorRevision('t')}`;

/** A task as shown, with its revision (what its entity tag is made of). */
export type ShownTask = ListedTask & { revision: string };

export function findListedTask(db: Kysely<Database>, id: string): Promise<ShownTask | undefined> {
  return selectListed(db, 'created_at').select(taskRevision.as('revision')).where('t.id', '=', id).executeTakeFirst();
}

/** The task's current revision (read under the lock of a change, to check its If-Match). */
export async function findTaskRevision(db: Kysely<Database>, id: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('tasks as t')
    .select(taskRevision.as('revision'))
    .where('t.id', '=', id)
    .executeTakeFirst();
  return row?.revision;
}

/** The task's writable fields, its row locked until the transaction ends (every change of it queues behind). */
export function lockTask(db: Kysely<Database>, id: string): Promise<LockedTask | undefined> {
  return db
    .selectFrom('tasks as t')
    .select(['t.id', 't.title', 't.description', 't.status', 't.priority', 't.assignee_id'])
    .select([isoMillis('t.due_at').as('due_at'), isoMillis('t.completed_at').as('completed_at')])
    .where('t.id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function insertTask(
  db: Kysely<Database>,
  task: TaskFields & { created_by_user_id: string | null; created_by_api_key_id: string | null; completed_at: Date | null; now: Date },
): Promise<string> {
  const { now, ...values } = task;
  const row = await db.insertInto('tasks').values({ ...values, created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Writes the changed fields; the version goes up by one (changedAt), as on every change of a task. */
export async function updateTaskFields(db: Kysely<Database>, id: string, fields: Partial<TaskFields> & { completed_at?: Date | null; now: Date }): Promise<void> {
  const { now, ...rest } = fields;
  await db
    .updateTable('tasks')
    .set({ ...rest, ...changedAt(now) })
    .where('id', '=', id)
    .execute();
}

export async function deleteTask(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('tasks').where('id', '=', id).execute();
}
