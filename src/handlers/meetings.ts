// Handlers of the Meetings operations (and their French paths, /reunions).
import type { Services } from '../services.js';
import type { Handler } from '../contract/handler-types.js';
import { presentMeeting as present } from '../meetings/presenter.js';
import { requireCaller } from '../auth/caller.js';

export function meetingHandlers({ meetings }: Services) {
  const listMeetings: Handler<'listMeetings'> = async ({ query, principal }) => {
    const { page, nextCursor } = await meetings.list(requireCaller(principal), query);
    return { status: 200, body: { data: page.map(present), next_cursor: nextCursor } };
  };

  const getMeeting: Handler<'getMeeting'> = async ({ path }) => ({ status: 200, body: present(await meetings.get(path.id)) });

  const createMeeting: Handler<'createMeeting'> = async ({ body, principal, request }) => {
    const meeting = present(await meetings.create(requireCaller(principal), body, request));
    return { status: 201, body: meeting, headers: { location: `/meetings/${meeting.id}` } };
  };

  const updateMeeting: Handler<'updateMeeting'> = async ({ body, path, principal, request }) => ({
    status: 200,
    body: present(await meetings.update(requireCaller(principal), path.id, body, request)),
  });

  const deleteMeeting: Handler<'deleteMeeting'> = async ({ path, principal, request }) => {
    await meetings.delete(requireCaller(principal), path.id, request);
    return { status: 204, body: undefined };
  };

  return {
    listMeetings,
    listReunions: listMeetings,
    createMeeting,
    createReunion: createMeeting,
    getMeeting,
    getReunion: getMeeting,
    updateMeeting,
    updateReunion: updateMeeting,
    deleteMeeting,
    deleteReunion: deleteMeeting,
  };
}
