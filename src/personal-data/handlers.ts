// The export of a person's data: for themselves (GET /me/export) and for a holder of
// `users.export` on their behalf (GET /users/{id}/export). Streamed, as an attachment.
import type { Handler } from '../http/handler-types.js';
import type { PersonalDataService } from './service.js';
import { requireCaller, signedInUser } from '../auth/caller.js';

/** `attachment`, named after the person and the day, so a browser saves it. */
const disposition = (userId: string, at: Date) => `attachment; filename="personal-data-${userId}-${at.toISOString().slice(0, 10)}.json"`;

export function personalDataHandlers({ personalData }: { personalData: PersonalDataService }) {
  const exportMyData: Handler<'exportMyData'> = async ({ principal, request }) => {
    const me = signedInUser(principal);
    const { userId, document, at } = await personalData.begin(me, me.userId, request);
    return { status: 200, body: document, headers: { 'Content-Disposition': disposition(userId, at) } };
  };

  const exportUserData: Handler<'exportUserData'> = async ({ principal, path, request }) => {
    const { userId, document, at } = await personalData.begin(requireCaller(principal), path.id, request);
    return { status: 200, body: document, headers: { 'Content-Disposition': disposition(userId, at) } };
  };

  return { exportMyData, exportUserData };
}
