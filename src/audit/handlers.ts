// Handlers of the audit journal: everything (audit.read), one's own, and sign-ins per hour.
import type { PlatformServices } from '../services.js';
import type { Handler } from '../http/handler-types.js';
import { presentAuditEvent } from './presenter.js';
import { signedInUser } from '../auth/caller.js';
import { parseInstant } from '../instant.js';

/** The format lets through texts that name no instant (month 19, a leap second): 400 naming the parameter. */
const date = (value: string | undefined, name: 'since' | 'before') => (value === undefined ? undefined : parseInstant(value, `request/query/${name}`));

export function auditHandlers({ audit }: Pick<PlatformServices, 'audit'>) {

  const listAuditEvents: Handler<'listAuditEvents'> = async ({ query = {} }) => {
    const { page, nextCursor } = await audit.list(query, {
      types: query.type,
      actorType: query.actor_type,
      actorId: query.actor_id,
      targetType: query.target_type,
      targetId: query.target_id,
      userId: query.user_id,
      since: date(query.since, 'since'),
      before: date(query.before, 'before'),
    });
    return { status: 200, body: { data: page.map(presentAuditEvent), next_cursor: nextCursor } };
  };

  const listMyAuditEvents: Handler<'listMyAuditEvents'> = async ({ query = {}, principal }) => {
    const me = signedInUser(principal);
    const { page, nextCursor } = await audit.list(query, { involving: me.userId, types: query.type, since: date(query.since, 'since'), before: date(query.before, 'before') });
    return { status: 200, body: { data: page.map(presentAuditEvent), next_cursor: nextCursor } };
  };

  const countSignInsPerHour: Handler<'countSignInsPerHour'> = async () => {
    const hours = await audit.signInsPerHour();
    return { status: 200, body: { hours: hours.map((h) => ({ hour: h.hour.toISOString(), succeeded: h.succeeded, failed: h.failed, throttled: h.throttled })) } };
  };

  return { listAuditEvents, listMyAuditEvents, countSignInsPerHour };
}
