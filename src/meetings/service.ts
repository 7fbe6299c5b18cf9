// Planning meetings. The permission of each operation (x-required-permission, checked before the
// handler runs) is the only source of a right: organising or attending a meeting gives none, and
// every holder of meetings.read/list sees every meeting (docs/AUTH.md). An id that is not a
// meeting's, well-formed or not, is the same 404.
import type { Kysely } from 'kysely';
import type { components, operations } from '../../generated/openapi.js';
import type { Database } from '../db/schema.js';
import type { ServiceDeps } from '../dependencies.js';
import type { Principal } from '../auth/principal.js';
import { personFilter } from '../auth/caller.js';
import { DomainError, fieldError } from '../errors.js';
import { cleanName, cleanText } from '../text/normalize.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { auditContext, type Origin } from '../audit/context.js';
import { changesBetween } from '../audit/changes.js';
import { serviceSecret } from '../auth/secrets/service-secrets.js';
import { resourceId } from '../uuid.js';
import { parseInstant } from '../instant.js';
import * as meetings from './repository.js';
import { lockUserStatuses } from '../users/repository.js';
import { keysetPage } from '../pagination/keyset-page.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { presentMeeting, type MeetingResource } from './presenter.js';
import { assertPrecondition, type Precondition } from '../revisions/precondition.js';

export const DEFAULT_PAGE_SIZE = 50;
/** The longest meeting, and the widest range a list may ask for (a quarter: 92 days). */
export const MAX_MEETING_MS = 24 * 3600_000;
export const MAX_RANGE_MS = 92 * 24 * 3600_000;
/** The people a meeting may invite besides its organizer (MeetingCreateRequest's and MeetingUpdateRequest's attendee_ids). */
export const MAX_ATTENDEES = 100;

type CreateInput = components['schemas']['MeetingCreateRequest'];
type UpdateInput = components['schemas']['MeetingUpdateRequest'];
type ListQuery = operations['listMeetings']['parameters']['query'];

const notFound = () => new DomainError('not_found', 'not_found', 'No meeting has this id.');

const cleanTitle = (value: string) => cleanName(value, { location: 'request/body/title', maxLength: 200 });
const cleanLocation = (value: string | null) => (value === null ? null : cleanName(value, { location: 'request/body/location', maxLength: 200 }));
/** A blank description is no description. */
const cleanDescription = (value: string | null) => (value === null ? null : cleanText(value, { location: 'request/body/description', maxLength: 10_000 }) || null);

/** ends_at after starts_at and at most 24 hours later; the field named is the one the caller sent (ends_at when both). */
function assertSpan(startsAt: Date, endsAt: Date, field: 'starts_at' | 'ends_at') {
  if (endsAt.getTime() <= startsAt.getTime()) throw fieldError('body', field, 'ends_at must be after starts_at', 'ends_before_start');
  if (endsAt.getTime() - startsAt.getTime() > MAX_MEETING_MS) throw fieldError('body', field, 'a meeting lasts at most 24 hours', 'too_long');
}

/** What the journal keeps of a meeting (sets sorted, as changesBetween compares them). */
function snapshot(m: meetings.MeetingFields & { attendee_ids: readonly string[] }) {
  return {
    title: m.title,
    description: m.description,
    starts_at: m.starts_at.toISOString(),
    ends_at: m.ends_at.toISOString(),
    location: m.location,
    status: m.status,
    organizer_id: m.organizer_id,
    attendee_ids: [...m.attendee_ids].sort(),
  };
}

/**
 * Checks, under a share lock kept until the transaction ends, that every person `added` to a
 * meeting is an active user: unknown and disabled are the same answer, naming the field.
 */
async function assertActive(trx: Kysely<Database>, added: readonly string[], field: 'attendee_ids' | 'organizer_id') {
  const statuses = await lockUserStatuses(trx, added);
  const inactive = added.find((id) => statuses.get(id) !== 'active');
  if (inactive) throw fieldError('body', field, `${inactive} is not an active user`, 'inactive_user');
}

export class MeetingService {
  private readonly cursorKey: ReturnType<typeof serviceSecret>;

  constructor(private readonly deps: ServiceDeps) {
    this.cursorKey = serviceSecret(deps.db, deps.clock, 'cursor_signing');
  }

  async get(id: string) {
    const known = resourceId(id);
    const meeting = known && (await meetings.findListedMeeting(this.deps.db, known));
    if (!meeting) throw notFound();
    return meeting;
  }

  async list(caller: Principal, query: ListQuery) {
    const from = parseInstant(query.from, 'request/query/from');
    const until = parseInstant(query.until, 'request/query/until');
    if (until.getTime() <= from.getTime()) throw fieldError('query', 'until', 'must be after from', 'range_empty');
    if (until.getTime() - from.getTime() > MAX_RANGE_MS) throw fieldError('query', 'until', 'must be at most 92 days after from', 'range_too_long');
    const attendeeId = personFilter(caller, 'attendee_id', query.attendee_id);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const scope = { from, until, attendeeId };
    const after = query.cursor === undefined ? undefined : decodeCursor(await this.cursorKey(), query.cursor, scope);
    const rows = await meetings.listMeetingsPage(this.deps.db, { from, until, attendeeId, after, limit });
    return keysetPage(rows, limit, async (last) => encodeCursor(await this.cursorKey(), { startsAt: last.cursor_starts_at, id: last.id }, scope));
  }

  /**
   * Made in the transaction it is given, which its caller opened and ends (a request's edge, a
   * command line): the meeting as its public event and the answer show it, with its revision.
   */
  async create(trx: Kysely<Database>, caller: Principal, input: CreateInput, origin: Origin): Promise<{ meeting: MeetingResource; revision: string }> {
    const fields: meetings.MeetingFields = {
      title: cleanTitle(input.title),
      description: cleanDescription(input.description ?? null),
      starts_at: parseInstant(input.starts_at, 'request/body/starts_at'),
      ends_at: parseInstant(input.ends_at, 'request/body/ends_at'),
      location: cleanLocation(input.location ?? null),
      status: input.status ?? 'scheduled',
      organizer_id: (input.organizer_id ?? (caller.kind === 'user' ? caller.userId : undefined))?.toLowerCase() ?? '',
    };
    if (!fields.organizer_id) throw fieldError('body', 'organizer_id', 'an API key must name the organizer, an active user', 'required');
    assertSpan(fields.starts_at, fields.ends_at, 'ends_at');
    // The organizer always attends.
    const attendeeIds = [...new Set([...(input.attendee_ids ?? []).map((id) => id.toLowerCase()), fields.organizer_id])];
    await assertActive(trx, [fields.organizer_id], 'organizer_id');
    await assertActive(trx, attendeeIds, 'attendee_ids');
    const now = this.deps.clock.now();
    const meetingId = await meetings.insertMeeting(trx, {
      ...fields,
      created_by_user_id: caller.kind === 'user' ? caller.userId : null,
      created_by_api_key_id: caller.kind === 'api_key' ? caller.apiKeyId : null,
      now,
    });
    await meetings.addAttendees(trx, { id: meetingId, ...fields }, attendeeIds);
    // Read in the transaction: the event shows it, the answer too.
    const created = (await meetings.findListedMeeting(trx, meetingId))!;
    const meeting = presentMeeting(created);
    await recordAuditEvent(trx, {
      type: 'meeting_created',
      at: now,
      context: auditContext(caller, origin),
      target: { type: 'meeting', id: meetingId, label: fields.title },
      changes: { before: null, after: snapshot({ ...fields, attendee_ids: attendeeIds }) },
      publish: { data: meeting },
    });
    return { meeting, revision: created.revision };
  }

  async update(caller: Principal, id: string, input: UpdateInput, origin: Origin, precondition?: Precondition) {
    const known = resourceId(id);
    if (!known) throw notFound();
    const sent: Partial<meetings.MeetingFields> = {
      title: input.title === undefined ? undefined : cleanTitle(input.title),
      description: input.description === undefined ? undefined : cleanDescription(input.description),
      starts_at: input.starts_at === undefined ? undefined : parseInstant(input.starts_at, 'request/body/starts_at'),
      ends_at: input.ends_at === undefined ? undefined : parseInstant(input.ends_at, 'request/body/ends_at'),
      location: input.location === undefined ? undefined : cleanLocation(input.location),
      status: input.status,
      organizer_id: input.organizer_id?.toLowerCase(),
    };
    return this.deps.db.transaction().execute(async (trx) => {
      const meeting = await meetings.lockMeeting(trx, known);
      if (!meeting) throw notFound();
      if (precondition) assertPrecondition(precondition, (await meetings.findMeetingRevision(trx, known))!);
      const next: meetings.MeetingFields = {
        title: sent.title ?? meeting.title,
        description: sent.description === undefined ? meeting.description : sent.description,
        starts_at: sent.starts_at ?? meeting.starts_at,
        ends_at: sent.ends_at ?? meeting.ends_at,
        location: sent.location === undefined ? meeting.location : sent.location,
        status: sent.status ?? meeting.status,
        organizer_id: sent.organizer_id ?? meeting.organizer_id,
      };
      assertSpan(next.starts_at, next.ends_at, sent.ends_at ? 'ends_at' : 'starts_at');
      // The attendees: the new set when sent, else the current one; the organizer always among them.
      const wanted = new Set([...(input.attendee_ids?.map((a) => a.toLowerCase()) ?? meeting.attendee_ids), next.organizer_id]);
      // Up to 100 people besides the organizer: the 101 ids a GET shows are accepted back as they are.
      if (wanted.size > MAX_ATTENDEES + 1) throw fieldError('body', 'attendee_ids', `at most ${MAX_ATTENDEES} people besides the organizer`, 'too_many_attendees');
      const added = [...wanted].filter((a) => !meeting.attendee_ids.includes(a));
      const removed = meeting.attendee_ids.filter((a) => !wanted.has(a));
      // Only people joining must be active: someone disabled may stay in the meetings they were in.
      if (next.organizer_id !== meeting.organizer_id) await assertActive(trx, [next.organizer_id], 'organizer_id');
      await assertActive(trx, added, 'attendee_ids');
      const changes = changesBetween(snapshot({ ...meeting, attendee_ids: meeting.attendee_ids }), snapshot({ ...next, attendee_ids: [...wanted] }));
      if (!changes) return (await meetings.findListedMeeting(trx, known))!;
      const now = this.deps.clock.now();
      await meetings.updateMeetingFields(trx, known, { ...next, now });
      await meetings.removeAttendees(trx, known, removed);
      await meetings.addAttendees(trx, { id: known, ...next }, added);
      const updated = (await meetings.findListedMeeting(trx, known))!;
      await recordAuditEvent(trx, {
        type: 'meeting_updated',
        at: now,
        context: auditContext(caller, origin),
        target: { type: 'meeting', id: known, label: next.title },
        changes,
        publish: { data: presentMeeting(updated) },
      });
      return updated;
    });
  }

  async delete(caller: Principal, id: string, origin: Origin, precondition?: Precondition) {
    const known = resourceId(id);
    if (!known) throw notFound();
    await this.deps.db.transaction().execute(async (trx) => {
      const meeting = await meetings.lockMeeting(trx, known);
      if (!meeting) throw notFound();
      if (precondition) assertPrecondition(precondition, (await meetings.findMeetingRevision(trx, known))!);
      const shown = (await meetings.findListedMeeting(trx, known))!;
      await meetings.deleteMeeting(trx, known);
      await recordAuditEvent(trx, {
        type: 'meeting_deleted',
        at: this.deps.clock.now(),
        context: auditContext(caller, origin),
        target: { type: 'meeting', id: known, label: meeting.title },
        changes: { before: snapshot(meeting), after: null },
        publish: { data: presentMeeting(shown) },
      });
    });
  }
}
