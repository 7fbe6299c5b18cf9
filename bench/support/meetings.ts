// The request of the meetings benchmarks: one person's week, the person with the median number of
// meetings this week (bench/meetings-week.ts measures it, bench/profile.ts meetings-* profiles it).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';

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
