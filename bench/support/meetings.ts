// The request of the meetings benchmarks: one person's week, the person with the median number of
// meetings this week (bench/meetings-week.ts measures it, bench/profile.ts meetings-* profiles it).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { seedUsers } from '../../src/cli/seed.js';
import { seedMeetings } from '../../src/cli/seed-meetings.js';
import { markSeeded, type BenchDatabase } from './database.js';
import { print } from './measure.js';

/** How many meetings the week benchmarks seed (BENCH_MEETINGS, a million). */
export const SEEDED_MEETINGS = Number(process.env.BENCH_MEETINGS ?? 1_000_000);

/**
 * The meetings of the week benchmarks, unless a kept database has them (BENCH_KEEP_DATABASES=1):
 * BENCH_MEETING_USERS users (2,000) and BENCH_MEETINGS meetings (1,000,000) among them, by the
 * command line's own seeding (2 years around today, 1 to 6 people each: ~17 meetings a week for a
 * person), then VACUUM ANALYZE.
 */
export async function seedMeetingsOnce(database: BenchDatabase): Promise<void> {
  if (database.seeded) {
    print(`kept the database an earlier run seeded (BENCH_KEEP_DATABASES=1)`);
    return;
  }
  const users = Number(process.env.BENCH_MEETING_USERS ?? 2_000);
  const meetings = SEEDED_MEETINGS;
  let t = Date.now();
  await seedUsers(database.db, { users, seed: 1 });
  print(`seeded ${users} users in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  t = Date.now();
  await seedMeetings(database.db, { meetings, seed: 1 });
  print(`seeded ${meetings} meetings in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  await sql`vacuum analyze`.execute(database.db);
  await markSeeded(database.db);
}

/** Monday 00:00 UTC of this week, and the next Monday. */
export function thisWeek(): { from: Date; until: Date } {
  const day = 24 * 3600_000;
  const today = Math.floor(Date.now() / day) * day;
  const from = new Date(today - ((new Date(today).getUTCDay() + 6) % 7) * day);
  return { from, until: new Date(from.getTime() + 7 * day) };
}

/** The median person of this week, and the path of their week's meetings. */
export async function medianPersonWeek(db: Kysely<Database>): Promise<{ from: Date; until: Date; person: { user_id: string; n: number }; people: number; path: string }> {
  const { from, until } = thisWeek();
  const counts = await sql<{ user_id: string; n: number }>`
    select user_id, count(*)::int as n from meeting_attendees
    where starts_at >= ${from.toISOString()}::timestamptz - interval '24 hours' and starts_at < ${until.toISOString()}::timestamptz and ends_at > ${from.toISOString()}::timestamptz
    group by user_id order by n, user_id`.execute(db);
  const person = counts.rows[Math.floor(counts.rows.length / 2)]!;
  const path = `/meetings?from=${from.toISOString()}&until=${until.toISOString()}&attendee_id=${person.user_id}`;
  return { from, until, person, people: counts.rows.length, path };
}
