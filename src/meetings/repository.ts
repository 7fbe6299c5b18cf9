// Queries on meetings and their attendees. Functions take the database or a transaction.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { components } from '../../generated/openapi.js';
import { creatorRevision } from '../revisions/revisions.js';
import type { Database } from '../db/schema.js';
import type { MeetingsTable } from './table.js';
import { fixedStatementsByShape } from '../db/fixed-statement.js';
import { changedAt } from '../db/versions.js';
import type { MeetingCursor } from './cursor.js';
import { isoMicros, isoMillis } from '../db/iso-time.js';

export type MeetingRow = Omit<Selectable<MeetingsTable>, 'during'>;

/** A person of a meeting as it is shown: their name and status now (a disabled user stays in their meetings). */
export type MeetingPerson = components['schemas']['Person'];

/**
 * A meeting as the API shows it: timestamps already in ISO 8601 (formatted by PostgreSQL, as
 * GET /users does), the organizer, attendees and creator with their names, and the exact start
 * for the cursor.
 */
export interface ListedMeeting {
  id: string;
  title: string;
  description: string | null;
  starts_at: string;
  ends_at: string;
  location: string | null;
  status: 'scheduled' | 'cancelled';
  organizer: MeetingPerson;
  attendees: MeetingPerson[];
  created_by: components['schemas']['CreatedBy'];
  created_at: string;
  updated_at: string;
  cursor_starts_at: string;
}

const person = (alias: string) =>
  sql`json_build_object('id', ${sql.ref(`${alias}.id`)}, 'label', ${sql.ref(`${alias}.first_name`)} || ' ' || ${sql.ref(`${alias}.last_name`)}, 'status', ${sql.ref(`${alias}.status`)})`;

/** The listed columns of meeting `m` (joined to its organizer `o` and creator `cu` or `ck`). */
const listedColumns = sql<ListedMeeting>`
  m.id, m.title, m.description, ${isoMillis('m.starts_at')} as starts_at, ${isoMillis('m.ends_at')} as ends_at,
  m.location, m.status, ${person('o')} as organizer,
  (select coalesce(json_agg(${person('u')} order by u.first_name, u.last_name, u.id), '[]')
     from meeting_attendees ma join users u on u.id = ma.user_id where ma.meeting_id = m.id) as attendees,
  case when m.created_by_user_id is not null
    then json_build_object('type', 'user', 'id', cu.id, 'label', cu.first_name || ' ' || cu.last_name)
    else json_build_object('type', 'api_key', 'id', ck.id, 'label', ck.name) end as created_by,
  ${isoMillis('m.created_at')} as created_at, ${isoMillis('m.updated_at')} as updated_at,
  ${isoMicros('m.starts_at')} as cursor_starts_at`;

const joins = sql`
  join users o on o.id = m.organizer_id
  left join users cu on cu.id = m.created_by_user_id
  left join api_keys ck on ck.id = m.created_by_api_key_id`;

interface PageParameters {
  from: Date;
  until: Date;
  attendeeId: string;
  afterStartsAt: string;
  afterId: string;
  limit: number;
}

/**
 * One page of the meetings overlapping [from, until), in (starts_at, id) order. No meeting lasts
 * more than 24 hours (a constraint of the table), so every overlapping meeting starts within
 * [from - 24 h, until): that bound lets the btree indexes walk the page in order from the cursor,
 * and `ends_at > from` drops those that ended before the range. Not `during &&` here: given both,
 * PostgreSQL combines the GiST and btree bitmaps and sorts every meeting of the range for one
 * page (7 to 60 ms for a week of a million meetings, against 0.35 ms for the ordered walk:
 * docs/BENCHMARKS.md).
 */
function pageQuery(shape: { after: boolean; attendee: boolean }, p: PageParameters) {
  const from = sql`${p.from}::timestamptz`;
  const until = sql`${p.until}::timestamptz`;
  if (shape.attendee) {
    const after = shape.after ? sql`and (a.starts_at, a.meeting_id) > (${p.afterStartsAt}::timestamptz, ${p.afterId}::uuid)` : sql``;
    return sql<ListedMeeting>`
      select ${listedColumns}
      from meeting_attendees a join meetings m on m.id = a.meeting_id ${joins}
      where a.user_id = ${p.attendeeId}::uuid
        and a.starts_at >= ${from} - interval '24 hours' and a.starts_at < ${until} and a.ends_at > ${from}
        ${after}
      order by a.starts_at, a.meeting_id
      limit ${p.limit}`;
  }
  const after = shape.after ? sql`and (m.starts_at, m.id) > (${p.afterStartsAt}::timestamptz, ${p.afterId}::uuid)` : sql``;
  return sql<ListedMeeting>`
    select ${listedColumns}
    from meetings m ${joins}
    where m.starts_at >= ${from} - interval '24 hours' and m.starts_at < ${until} and m.ends_at > ${from}
      ${after}
    order by m.starts_at, m.id
    limit ${p.limit}`;
}

const pageStatement = fixedStatementsByShape((shape: { after: boolean; attendee: boolean }) => (_db, p: PageParameters) => pageQuery(shape, p));

/** One person's first page of a range: what the back office's week view asks (bench/ runs this text). */
export const personFirstPage = pageStatement({ after: false, attendee: true });

/** One page of the meetings overlapping [from, until), of one attendee or of everyone; `limit + 1` rows tell whether more follow. */
export function listMeetingsPage(
  db: Kysely<Database>,
  options: { from: Date; until: Date; attendeeId?: string | undefined; after?: MeetingCursor | undefined; limit: number },
): Promise<ListedMeeting[]> {
  const statement = pageStatement({ after: options.after !== undefined, attendee: options.attendeeId !== undefined });
  return statement.execute(db, {
    from: options.from,
    until: options.until,
    attendeeId: options.attendeeId ?? '',
    afterStartsAt: options.after?.startsAt ?? '',
    afterId: options.after?.id ?? '',
    limit: options.limit + 1,
  });
}

/** A meeting (`m`): its version, its organizer's, its creator's, and each attendee's (names and status shown). */
export const meetingRevision = sql<string>`m.version::text || '/' || coalesce((select o.version::text from users o where o.id = m.organizer_id), '')
  || '/' || ${creatorRevision('m')} || coalesce((
    select ';' || string_agg(u.id::text || '.' || u.version::text, ';' order by u.id)
    from meeting_attendees ma join users u on u.id = ma.user_id where ma.meeting_id = m.id), '')`;

/** A meeting as shown, with its revision (what its entity tag is made of). */
export type ShownMeeting = ListedMeeting & { revision: string };

export async function findListedMeeting(db: Kysely<Database>, id: string): Promise<ShownMeeting | undefined> {
  const { rows } = await sql<ShownMeeting>`select ${listedColumns}, ${meetingRevision} as revision from meetings m ${joins} where m.id = ${id}::uuid`.execute(db);
  return rows[0];
}

/** The meeting's current revision (read under the lock of a change, to check its If-Match). */
export async function findMeetingRevision(db: Kysely<Database>, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('meetings as m').select(meetingRevision.as('revision')).where('m.id', '=', id).executeTakeFirst();
  return row?.revision;
}

/** The meeting's row, locked until the transaction ends, with its attendees' ids (sorted); undefined when no meeting has this id. */
export async function lockMeeting(db: Kysely<Database>, id: string): Promise<(MeetingRow & { attendee_ids: string[] }) | undefined> {
  const meeting = await db
    .selectFrom('meetings')
    .select(['id', 'title', 'description', 'starts_at', 'ends_at', 'location', 'status', 'organizer_id', 'created_by_user_id', 'created_by_api_key_id', 'created_at', 'updated_at', 'version'])
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  if (!meeting) return undefined;
  const attendees = await db.selectFrom('meeting_attendees').select('user_id').where('meeting_id', '=', id).orderBy('user_id').execute();
  return { ...meeting, attendee_ids: attendees.map((a) => a.user_id) };
}

export interface MeetingFields {
  title: string;
  description: string | null;
  starts_at: Date;
  ends_at: Date;
  location: string | null;
  status: 'scheduled' | 'cancelled';
  organizer_id: string;
}

export async function insertMeeting(
  db: Kysely<Database>,
  meeting: MeetingFields & { created_by_user_id: string | null; created_by_api_key_id: string | null; now: Date },
): Promise<string> {
  const { now, ...values } = meeting;
  const row = await db.insertInto('meetings').values({ ...values, created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Changes the fields given and bumps the version (the attendees' times follow through the cascading foreign key). */
export async function updateMeetingFields(db: Kysely<Database>, id: string, fields: Partial<MeetingFields> & { now: Date }): Promise<void> {
  const { now, ...rest } = fields;
  await db
    .updateTable('meetings')
    .set({ ...rest, ...changedAt(now) })
    .where('id', '=', id)
    .execute();
}

export async function addAttendees(db: Kysely<Database>, meeting: { id: string; starts_at: Date; ends_at: Date }, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .insertInto('meeting_attendees')
    .values(userIds.map((user_id) => ({ meeting_id: meeting.id, user_id, starts_at: meeting.starts_at, ends_at: meeting.ends_at })))
    .execute();
}

export async function removeAttendees(db: Kysely<Database>, meetingId: string, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  await db.deleteFrom('meeting_attendees').where('meeting_id', '=', meetingId).where('user_id', 'in', [...userIds]).execute();
}

/** Deletes the meeting; its attendees go with it (ON DELETE CASCADE). */
export async function deleteMeeting(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('meetings').where('id', '=', id).execute();
}
