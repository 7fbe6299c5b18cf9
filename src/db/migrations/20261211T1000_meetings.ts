// Meetings and the people attending them. Typed Kysely<any> so the migration stays
// frozen in time.
//
// A meeting is the half-open span [starts_at, ends_at) of at most 24 hours. Two questions must be
// fast with a million meetings stored (docs/BENCHMARKS.md has the plans):
// - every meeting overlapping a range: `during && range` on a GiST index answers overlap without
//   an order; a page is asked in (starts_at, id) order, and since no meeting lasts more than 24
//   hours the overlapping ones start within [from - 24 h, until), so the btree on (starts_at, id)
//   walks them in page order from a cursor (src/meetings/repository.ts says which is used where).
// - one person's meetings overlapping a range: meeting_attendees carries each meeting's times
//   (kept equal by the database: a composite foreign key with ON UPDATE CASCADE), so the btree on
//   (user_id, starts_at, meeting_id) finds them in page order without visiting any other meeting
//   of that person.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table meetings (
      id uuid primary key default gen_random_uuid(),
      title text not null,
      description text,
      starts_at timestamptz not null,
      ends_at timestamptz not null,
      during tstzrange generated always as (tstzrange(starts_at, ends_at, '[)')) stored,
      location text,
      status text not null default 'scheduled' check (status in ('scheduled', 'cancelled')),
      organizer_id uuid not null references users (id),
      created_by_user_id uuid references users (id),
      created_by_api_key_id uuid references api_keys (id),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      -- Bumped by every UPDATE of the meeting or of its attendees (the ETag's source).
      version integer not null default 1,
      constraint meetings_span check (ends_at > starts_at and ends_at <= starts_at + interval '24 hours'),
      constraint meetings_created_by check (num_nonnulls(created_by_user_id, created_by_api_key_id) = 1),
      constraint meetings_id_span_key unique (id, starts_at, ends_at)
    )`.execute(db);
  await sql`create index meetings_during_idx on meetings using gist (during)`.execute(db);
  await sql`create index meetings_starts_at_id_idx on meetings (starts_at, id)`.execute(db);
  await sql`
    create table meeting_attendees (
      meeting_id uuid not null,
      user_id uuid not null references users (id),
      starts_at timestamptz not null,
      ends_at timestamptz not null,
      primary key (meeting_id, user_id),
      constraint meeting_attendees_meeting_fkey foreign key (meeting_id, starts_at, ends_at)
        references meetings (id, starts_at, ends_at) on update cascade on delete cascade
    )`.execute(db);
  await sql`create index meeting_attendees_user_starts_idx on meeting_attendees (user_id, starts_at, meeting_id) include (ends_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('meeting_attendees').execute();
  await db.schema.dropTable('meetings').execute();
}
