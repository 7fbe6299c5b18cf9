// Meetings and their attendees.
import type { Dependencies } from '../dependencies.js';
import { MeetingService } from './service.js';
import { meetingHandlers } from './handlers.js';

/** Built once, in src/services.ts. */
export const services = (deps: Dependencies) => ({ meetings: new MeetingService(deps) });

export const handlers = meetingHandlers;
