// `backoffice seed --meetings N`: N realistic meetings among the active users already there (seed
// users first), spread over working hours from a year ago to a year ahead, 15 minutes to 2 hours
// long, each with 1 to 6 people (the organizer among them, who also made it). Batches of 5,000
// meetings, each one transaction of three statements (meetings, their attendees, their audit
// events as the command line's act), fed by unnest(...) arrays (timed in docs/BENCHMARKS.md).
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { osUser } from '../audit/context.js';

const TITLES = ['Weekly sync', 'Quarterly review', 'Customer call', 'Design review', 'One-on-one', 'Hiring panel', 'Support hand-over', 'Planning', 'Retrospective', 'Budget review', 'Onboarding', 'Incident review'];
const ROOMS = ['Room 1', 'Room 2', 'Room 4', 'Main hall', 'Video call', null, null];
const MINUTES = [15, 30, 30, 45, 60, 60, 90, 120];
const BATCH_SIZE = 5_000;
/** How many people a meeting is drawn from: the first active users, enough for any demo or benchmark. */
const PEOPLE_POOL = 100_000;

export interface SeedMeetingsOptions {
  meetings: number;
  /** Makes titles, times and people reproducible. */
  seed?: number;
  onProgress?: (inserted: number) => void;
}

/** Inserts `meetings` new meetings among the active users; returns how many were inserted. */
export async function seedMeetings(db: Kysely<Database>, options: SeedMeetingsOptions): Promise<number> {
  const people = (await db.selectFrom('users').select('id').where('status', '=', 'active').orderBy('created_at').limit(PEOPLE_POOL).execute()).map((u) => u.id);
  if (people.length === 0) throw new Error('No active user to plan meetings for: seed users first (--users N).');
  // Loaded here, not with the module: faker is the command line's heaviest import (src/cli/seed.ts).
  const { Faker, en, base } = await import('@faker-js/faker');
  const faker = new Faker({ locale: [en, base] });
  if (options.seed !== undefined) faker.seed(options.seed);
  const day = 24 * 3600_000;
  const today = Math.floor(Date.now() / day) * day;
  const actor = osUser();
  let inserted = 0;
  for (let start = 0; start < options.meetings; start += BATCH_SIZE) {
    const size = Math.min(BATCH_SIZE, options.meetings - start);
    const m = { ids: [] as string[], titles: [] as string[], locations: [] as (string | null)[], starts: [] as string[], ends: [] as string[], organizers: [] as string[] };
    const a = { meetings: [] as string[], users: [] as string[], starts: [] as string[], ends: [] as string[] };
    for (let i = 0; i < size; i++) {
      // A working day within a year of today, 08:00 to 17:45 UTC on the quarter hour.
      let date = today + faker.number.int({ min: -365, max: 365 }) * day;
      const weekday = new Date(date).getUTCDay();
      if (weekday === 0 || weekday === 6) date += (weekday === 6 ? 2 : 1) * day;
      const starts = new Date(date + (8 * 60 + faker.number.int(39) * 15) * 60_000);
      const ends = new Date(starts.getTime() + faker.helpers.arrayElement(MINUTES) * 60_000);
      const id = randomUUID();
      const organizer = faker.helpers.arrayElement(people);
      // Up to 5 guests drawn one by one (faker's arrayElements copies the whole pool each time).
      const attendees = new Set([organizer, ...Array.from({ length: faker.number.int(5) }, () => faker.helpers.arrayElement(people))]);
      m.ids.push(id);
      m.titles.push(faker.helpers.arrayElement(TITLES));
      m.locations.push(faker.helpers.arrayElement(ROOMS));
      m.starts.push(starts.toISOString());
      m.ends.push(ends.toISOString());
      m.organizers.push(organizer);
      for (const user of attendees) {
        a.meetings.push(id);
        a.users.push(user);
        a.starts.push(starts.toISOString());
        a.ends.push(ends.toISOString());
      }
    }
    await db.transaction().execute(async (trx) => {
      await sql`
        insert into meetings (id, title, location, starts_at, ends_at, organizer_id, created_by_user_id)
        select i, t, l, s, e, o, o from unnest(${m.ids}::uuid[], ${m.titles}::text[], ${m.locations}::text[], ${m.starts}::timestamptz[], ${m.ends}::timestamptz[], ${m.organizers}::uuid[]) as x(i, t, l, s, e, o)`.execute(trx);
      await sql`
        insert into meeting_attendees (meeting_id, user_id, starts_at, ends_at)
        select * from unnest(${a.meetings}::uuid[], ${a.users}::uuid[], ${a.starts}::timestamptz[], ${a.ends}::timestamptz[])`.execute(trx);
      await sql`
        insert into security_events (type, occurred_at, actor_type, actor_label, target_type, target_id, target_label, details, changes)
        select 'meeting_created', now(), 'cli', ${actor}, 'meeting', m.id, m.title, '{"seeded": true}',
          jsonb_build_object('before', null, 'after', jsonb_build_object('title', m.title, 'description', null,
            'starts_at', to_char(m.starts_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'ends_at', to_char(m.ends_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'location', m.location, 'status', m.status, 'organizer_id', m.organizer_id,
            'attendee_ids', (select jsonb_agg(ma.user_id order by ma.user_id) from meeting_attendees ma where ma.meeting_id = m.id)))
        from meetings m where m.id = any(${m.ids}::uuid[])`.execute(trx);
    });
    inserted += size;
    options.onProgress?.(start + size);
  }
  return inserted;
}
