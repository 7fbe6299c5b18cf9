// `backoffice seed --users N --meetings N --tasks N`: fills the database with N realistic users (names and
// e-mail addresses from faker) for demos and benchmarks, then meetings and tasks among them (seed-meetings.ts, seed-tasks.ts), in batches of one INSERT ... SELECT unnest(...)
// each, with a progress bar. Seeded users have no password: they cannot sign in. Each is recorded in
// the audit trail as created by the command line.
import { randomBytes } from 'node:crypto';
import { InvalidArgumentError, type Command } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { uniqueNameKey } from '../text/normalize.js';
import { withDatabase } from './database.js';
import { osUser } from '../audit/context.js';
import { seedMeetings } from './seed-meetings.js';
import { seedTasks } from './seed-tasks.js';

export const SEED_BATCH_SIZE = 5_000;

function positiveInteger(max: number) {
  return (value: string) => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < 1 || n > max) throw new InvalidArgumentError(`expected a whole number from 1 to ${max}`);
    return n;
  };
}

export interface SeedOptions {
  users: number;
  /** Makes the names reproducible. */
  seed?: number;
  onProgress?: (inserted: number) => void;
}

/** Inserts `users` new users; returns how many were inserted. */
export async function seedUsers(db: Kysely<Database>, options: SeedOptions): Promise<number> {
  // Loaded here, not with the module: faker is the heaviest import of the command line, and every
  // other command (each one a process of its own) would pay for it at start.
  const { Faker, en, fr, de, base } = await import('@faker-js/faker');
  const faker = new Faker({ locale: [en, fr, de, base] });
  if (options.seed !== undefined) faker.seed(options.seed);
  // A tag per run keeps addresses unique across runs; the counter keeps them unique within one.
  const run = randomBytes(3).toString('hex');
  const newest = Date.now();
  const actor = osUser();
  let inserted = 0;
  for (let start = 0; start < options.users; start += SEED_BATCH_SIZE) {
    const size = Math.min(SEED_BATCH_SIZE, options.users - start);
    const emails: string[] = [];
    const keys: string[] = [];
    const firsts: string[] = [];
    const lasts: string[] = [];
    const statuses: string[] = [];
    const created: string[] = [];
    for (let i = 0; i < size; i++) {
      const n = start + i;
      const firstName = faker.person.firstName();
      const lastName = faker.person.lastName();
      const local = faker.internet.username({ firstName, lastName }).toLowerCase().replace(/[^a-z0-9._-]/g, '');
      emails.push(`${local || 'user'}.${run}${n}@${faker.internet.domainName()}`);
      keys.push(uniqueNameKey(emails.at(-1)!));
      firsts.push(firstName);
      lasts.push(lastName);
      statuses.push(faker.number.int(99) < 5 ? 'disabled' : 'active');
      // Oldest first, a few seconds apart, ending now: sign-ups spread over time.
      created.push(new Date(newest - (options.users - n) * 3_000).toISOString());
    }
    // Each user with its audit event (the command line created it), in the same statement.
    const result = await sql<{ n: number }>`
      with u as (
        insert into users (email, email_key, first_name, last_name, status, created_at, updated_at)
        select e, k, f, l, s, c, c from unnest(${emails}::text[], ${keys}::text[], ${firsts}::text[], ${lasts}::text[], ${statuses}::text[], ${created}::timestamptz[]) as t(e, k, f, l, s, c)
        on conflict do nothing
        returning id, email, first_name, last_name, status, created_at
      ), e as (
        insert into security_events (type, occurred_at, user_id, actor_type, actor_label, target_type, target_id, target_label, details, changes)
        select 'user_created', created_at, id, 'cli', ${actor}, 'user', id, first_name || ' ' || last_name, '{"password_set": false, "seeded": true}',
          jsonb_build_object('before', null, 'after', jsonb_build_object('email', email, 'first_name', first_name, 'last_name', last_name, 'status', status, 'roles', '[]'::jsonb))
        from u
      )
      select count(*)::int as n from u`.execute(db);
    inserted += result.rows[0]?.n ?? 0;
    options.onProgress?.(start + size);
  }
  return inserted;
}

export function registerSeed(program: Command): void {
  program
    .command('seed')
    .description('Fill the database with realistic demo users (no passwords), and meetings and tasks among them')
    .option('--users <n>', 'how many users to create (1 to 10,000,000)', positiveInteger(10_000_000))
    .option('--meetings <n>', 'how many meetings to plan among the active users (1 to 10,000,000), after the users', positiveInteger(10_000_000))
    .option('--tasks <n>', 'how many tasks to make among the active users (1 to 10,000,000), after the users', positiveInteger(10_000_000))
    .option('--seed <n>', 'random seed, for reproducible names', positiveInteger(2 ** 31))
    .action((options: { users?: number; meetings?: number; tasks?: number; seed?: number }) => {
      if (options.users === undefined && options.meetings === undefined && options.tasks === undefined) {
        throw new InvalidArgumentError('say what to seed: --users N, --meetings N, --tasks N, or several');
      }
      return withDatabase(async ({ db }) => {
        if (options.users !== undefined) {
          const users = options.users;
          await withProgress('users', users, (onProgress) => seedUsers(db, { users, seed: options.seed, onProgress }));
        }
        if (options.meetings !== undefined) {
          const meetings = options.meetings;
          await withProgress('meetings', meetings, (onProgress) => seedMeetings(db, { meetings, seed: options.seed, onProgress }));
        }
        if (options.tasks !== undefined) {
          const tasks = options.tasks;
          await withProgress('tasks', tasks, (onProgress) => seedTasks(db, { tasks, seed: options.seed, onProgress }));
        }
      });
    });
}

/** Runs one seeding step behind a progress bar on stderr, then prints what it inserted. */
async function withProgress(what: string, total: number, step: (onProgress: (done: number) => void) => Promise<number>): Promise<void> {
  const bar = new SingleBar({ format: `Seeding ${what} [{bar}] {percentage}% | {value}/{total} | ETA {eta}s`, hideCursor: true, stream: process.stderr, noTTYOutput: true, notTTYSchedule: 1000 }, Presets.shades_classic);
  bar.start(total, 0);
  const started = Date.now();
  try {
    const inserted = await step((done) => bar.update(done));
    bar.stop();
    process.stdout.write(`Inserted ${inserted} ${what} in ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
  } catch (err) {
    bar.stop();
    throw err;
  }
}
