// Handlers of the mail operations: a person's own security notices.
import type { PlatformServices } from '../services.js';
import type { Handler } from '../http/handler-types.js';
import { requireCaller } from '../auth/caller.js';
import type { components } from '../../generated/openapi.js';

type Notice = components['schemas']['Notice'];

export function mailHandlers({ mail }: Pick<PlatformServices, 'mail'>) {
  const listMyNotices: Handler<'listMyNotices'> = async ({ principal }) => {
    const me = requireCaller(principal);
    const rows = me.kind === 'user' ? await mail.notices(me.userId) : [];
    return { status: 200, body: { data: rows as Notice[] } };
  };
  return { listMyNotices };
}
