// Handlers of the Meetings operations (and their French paths, /reunions).
import type { PlatformServices } from '../services.js';
import type { MeetingService } from './service.js';
import type { Handler } from '../http/handler-types.js';
import { presentMeeting as present } from './presenter.js';
import type { ShownMeeting } from './repository.js';
import { requireCaller } from '../auth/caller.js';
import { revisionOf } from '../http/entity-tags.js';

/** One meeting, with its revision (the router answers it as the ETag). */
const shown = (meeting: ShownMeeting) => ({ status: 200 as const, body: present(meeting), revision: revisionOf(meeting.id, meeting.revision) });

export function meetingHandlers({ meetings, idempotency }: { meetings: MeetingService } & Pick<PlatformServices, 'idempotency'>) {
  const listMeetings: Handler<'listMeetings'> = async ({ query, principal }) => {
    const { page, nextCursor } = await meetings.list(requireCaller(principal), query);
    return { status: 200, body: { data: page.map(present), next_cursor: nextCursor } };
  };

  const getMeeting: Handler<'getMeeting'> = async ({ path }) => shown(await meetings.get(path.id));

  const createMeeting: Handler<'createMeeting'> = ({ body, principal, request, idempotency: key }) =>
    idempotency.once(
      key,
      (trx) => meetings.create(trx, requireCaller(principal), body, request),
      ({ meeting, revision }) => ({ status: 201 as const, body: meeting, headers: { Location: `/meetings/${meeting.id}` }, revision: revisionOf(meeting.id, revision) }),
    );

  const updateMeeting: Handler<'updateMeeting'> = async ({ body, path, principal, request, precondition }) =>
    shown(await meetings.update(requireCaller(principal), path.id, body, request, precondition));

  const deleteMeeting: Handler<'deleteMeeting'> = async ({ path, principal, request, precondition }) => {
    await meetings.delete(requireCaller(principal), path.id, request, precondition);
    return { status: 204, body: undefined };
  };

  return {
    listMeetings,
    createMeeting,
    getMeeting,
    updateMeeting,
    deleteMeeting,
  };
}
