// Tasks. Typed Kysely<any> so the migration stays frozen in time.
//
// - Who created a task is a user or an API key, exactly one of them. Neither users nor keys are
//   ever deleted by the service (disabled, revoked): the foreign keys refuse a deletion that would
//   leave a task pointing nowhere, as api_keys.created_by does (20261201T1000).
// - completed_at is set exactly while the task is done; the check keeps the two in step.
// - version starts at 1 and every UPDATE of the repository adds one (the ETag of safe writes).
// - Title search is case- and accent-insensitive through fold_for_search(title): unaccent() is
//   only STABLE (its dictionary could change), so it cannot be indexed; the wrapper names the
//   dictionary itself and is declared IMMUTABLE, the usual way to index it. A trigram GIN index on
//   it serves `like '%text%'` at any position in the title.
// - Keyset paging walks (created_at, id), or (due date, id) with tasks without one last: the
//   missing due date sorts as 'infinity', a value no request can write (the contract takes RFC 3339
//   date-times only), so one row comparison pages through both.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);
  await sql`create extension if not exists unaccent`.execute(db);
  await sql`
    create function fold_for_search(value text) returns text
    language sql immutable strict parallel safe
    as $$ select lower(public.unaccent('public.unaccent'::regdictionary, value)) $$`.execute(db);
  await db.schema
    .createTable('tasks')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('title', 'text', (c) => c.notNull().check(sql`char_length(title) between 1 and 200`))
    .addColumn('description', 'text', (c) => c.check(sql`char_length(description) <= 10000`))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('todo').check(sql`status in ('todo', 'in_progress', 'done', 'cancelled')`))
    .addColumn('priority', 'text', (c) => c.notNull().defaultTo('normal').check(sql`priority in ('low', 'normal', 'high', 'urgent')`))
    .addColumn('due_at', 'timestamptz', (c) => c.check(sql`due_at <> 'infinity'::timestamptz and due_at <> '-infinity'::timestamptz`))
    .addColumn('assignee_id', 'uuid', (c) => c.references('users.id').onDelete('restrict'))
    .addColumn('created_by_user_id', 'uuid', (c) => c.references('users.id').onDelete('restrict'))
    .addColumn('created_by_api_key_id', 'uuid', (c) => c.references('api_keys.id').onDelete('restrict'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('completed_at', 'timestamptz')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addCheckConstraint('tasks_one_creator', sql`num_nonnulls(created_by_user_id, created_by_api_key_id) = 1`)
    .addCheckConstraint('tasks_completed_when_done', sql`(status = 'done') = (completed_at is not null)`)
    .execute();
  await db.schema.createIndex('tasks_created_at_id_idx').on('tasks').columns(['created_at', 'id']).execute();
  await sql`create index tasks_due_at_id_idx on tasks ((coalesce(due_at, 'infinity'::timestamptz)), id)`.execute(db);
  // One person's tasks, in either order.
  await db.schema.createIndex('tasks_assignee_created_at_idx').on('tasks').columns(['assignee_id', 'created_at', 'id']).execute();
  await sql`create index tasks_assignee_due_at_idx on tasks (assignee_id, (coalesce(due_at, 'infinity'::timestamptz)), id)`.execute(db);
  await sql`create index tasks_title_search_idx on tasks using gin (fold_for_search(title) gin_trgm_ops)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tasks').execute();
  await sql`drop function fold_for_search(text)`.execute(db);
}
