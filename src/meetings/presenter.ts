// The public shape of a meeting: what the contract's Meeting schema allows.
import type { components } from '../../generated/openapi.js';
import type { ListedMeeting } from './repository.js';

export type MeetingResource = components['schemas']['Meeting'];

export function presentMeeting(meeting: ListedMeeting): MeetingResource {
  return {
    id: meeting.id,
    title: meeting.title,
    description: meeting.description,
    starts_at: meeting.starts_at,
    ends_at: meeting.ends_at,
    location: meeting.location,
    status: meeting.status,
    organizer_id: meeting.organizer.id,
    organizer: meeting.organizer,
    attendee_ids: meeting.attendees.map((a) => a.id),
    attendees: meeting.attendees,
    created_by: meeting.created_by,
    created_at: meeting.created_at,
    updated_at: meeting.updated_at,
  };
}
