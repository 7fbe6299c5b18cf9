// `backoffice seed --tasks N`: N realistic tasks made by and assigned to the active users already
// there (seed users first). The rows are drawn by PostgreSQL itself (generate_series and random()),
// 50,000 to a statement that also writes their audit events as the command line's act, so a million
// tasks take no per-row work in Node (timed in docs/BENCHMARKS.md). Created over the past year, a
// task every 30 seconds, oldest first; 40 % to do, 25 % in progress, 25 % done, 10 % cancelled;
// 70 % with a due date within two months of creation; 80 % assigned.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { osUser } from '../audit/context.js';

const VERBS = ['Call back', 'Review', 'Prepare', 'Send', 'Update', 'Check', 'Plan', 'Renew', 'Fix', 'Write to', 'Archive', 'Sign'];
const OBJECTS = [
  'the Lyon office',
  'the March invoices',
  'the école’s budget',
  'the onboarding checklist',
  'the supplier contract',
  'the quarterly report',
  'the Zürich team',
  'the customer’s request',
  'the café order',
  'the São Paulo partners',
  'the insurance renewal',
  'the Kraków warehouse',
];
const BATCH_SIZE = 50_000;
/** How many people tasks are drawn from: the first active users, enough for any demo or benchmark. */
const PEOPLE_POOL = 100_000;
const SPACING_S = 30;

export interface SeedTasksOptions {
  tasks: number;
  /** Makes titles, statuses, dates and people reproducible. */
  seed?: number;
  onProgress?: (inserted: number) => void;
}

/** Inserts `tasks` new tasks among the active users; returns how many were inserted. */
export async function seedTasks(db: Kysely<Database>, options: SeedTasksOptions): Promise<number> {
  const anyone = await db.selectFrom('users').select('id').where('status', '=', 'active').limit(1).executeTakeFirst();
  if (!anyone) throw new Error('No active user to make tasks for: seed users first (--users N).');
  const actor = osUser();
  const newest = new Date().toISOString();
  let inserted = 0;
  for (let start = 1; start <= options.tasks; start += BATCH_SIZE) {
    const end = Math.min(start + BATCH_SIZE - 1, options.tasks);
    inserted += await db.transaction().execute(async (trx) => {
      // random() follows setseed() for the rest of the transaction, on its one connection.
      if (options.seed !== undefined) await sql`select setseed(${((options.seed + start) % 2 ** 31) / 2 ** 31})`.execute(trx);
      const result = await sql<{ n: number }>`
        with people as (
          select array_agg(id) as ids from (select id from users where status = 'active' order by created_at, id limit ${PEOPLE_POOL}) p
        ), drawn as (
          select n, random() as verb, random() as object, random() as status, random() as priority,
            random() as due, random() as due_in, random() as assigned, random() as assignee, random() as creator, random() as done_in
          from generate_series(${start}::int, ${end}::int) n
        ), task as (
          select
            (${VERBS}::text[])[1 + floor(d.verb * ${VERBS.length})::int] || ' ' || (${OBJECTS}::text[])[1 + floor(d.object * ${OBJECTS.length})::int] as title,
            case when d.status < 0.40 then 'todo' when d.status < 0.65 then 'in_progress' when d.status < 0.90 then 'done' else 'cancelled' end as status,
            case when d.priority < 0.20 then 'low' when d.priority < 0.70 then 'normal' when d.priority < 0.90 then 'high' else 'urgent' end as priority,
            ${newest}::timestamptz - (${options.tasks}::int - d.n) * ${SPACING_S}::int * interval '1 second' as created_at,
            d.due, d.due_in, d.done_in,
            case when d.assigned < 0.80 then p.ids[1 + floor(d.assignee * array_length(p.ids, 1))::int] end as assignee_id,
            p.ids[1 + floor(d.creator * array_length(p.ids, 1))::int] as created_by
          from drawn d cross join people p
          order by d.n
        ), t as (
          insert into tasks (title, status, priority, due_at, assignee_id, created_by_user_id, created_at, updated_at, completed_at)
          select title, status, priority,
            case when due < 0.70 then created_at + (1 + floor(due_in * 60)) * interval '1 day' end,
            assignee_id, created_by, created_at,
            case when status = 'done' then created_at + (1 + floor(done_in * 10)) * interval '1 day' else created_at end,
            case when status = 'done' then created_at + (1 + floor(done_in * 10)) * interval '1 day' end
          from task
          returning id, title, status, priority, due_at, assignee_id, completed_at, created_at
        ), e as (
          insert into security_events (type, occurred_at, actor_type, actor_label, target_type, target_id, target_label, details, changes)
          select 'task_created', created_at, 'cli', ${actor}, 'task', id, title, '{"seeded": true}',
            jsonb_build_object('before', null, 'after', jsonb_build_object('title', title, 'description', null, 'status', status, 'priority', priority,
              'due_at', to_char(due_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'assignee_id', assignee_id,
              'completed_at', to_char(completed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
          from t
        )
        select count(*)::int as n from t`.execute(trx);
      return result.rows[0]?.n ?? 0;
    });
    options.onProgress?.(end);
  }
  return inserted;
}
