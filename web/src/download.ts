// "Download my data" (GET /me/export) and an administrator's download of a person's data
// (GET /users/{id}/export): the document comes as a file, named as the server's
// Content-Disposition says. Through call(), so an expired token is refreshed and the step-up
// dialog asks for a fresh proof first (the export needs one: web/src/step-up.tsx).
import { api, call } from './api/client.js';

const fileNameOf = (response: Response) => /filename="([^"]+)"/.exec(response.headers.get('Content-Disposition') ?? '')?.[1] ?? 'personal-data.json';

/** Downloads the data of `userId`, or the signed-in person's own without one. */
export async function downloadPersonalData(userId?: string): Promise<void> {
  let name = 'personal-data.json';
  const blob = await call(async () => {
    const result = userId === undefined ? await api.GET('/me/export', { parseAs: 'blob' }) : await api.GET('/users/{id}/export', { params: { path: { id: userId } }, parseAs: 'blob' });
    name = fileNameOf(result.response);
    return result;
  });
  const url = URL.createObjectURL(blob as Blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has started its download from the object URL by now; a minute is ample.
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
