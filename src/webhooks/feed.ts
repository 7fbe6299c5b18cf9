// The event feed (GET /events): what the caller may read now, after a signed cursor, oldest first,
// for EVENT_RETENTION_DAYS (the configuration's; docs/EVENTS.md).
import type { components } from '../../generated/openapi.js';
import type { Dependencies } from '../dependencies.js';
import type { Principal } from '../auth/principal.js';
import { invalid } from '../errors.js';
import { serviceSecret } from '../auth/secrets/service-secrets.js';
import { openCursor, sealCursor } from '../pagination/signed-cursor.js';
import * as repo from './repository.js';

type EventType = components['schemas']['EventType'];

const DEFAULT_PAGE_SIZE = 50;

const invalidAfter = () =>
  invalid('invalid_cursor', 'The cursor is not one this service issued for these types; start again without it.', {
    errors: [{ location: 'request/query/after', message: 'is not a cursor issued for this query' }],
  });

export class EventFeed {
  private readonly cursorKey: ReturnType<typeof serviceSecret>;

  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>) {
    this.cursorKey = serviceSecret(deps.db, deps.clock, 'cursor_signing');
  }

  /** What the caller may read now, after the cursor, oldest first. */
  async read(caller: Principal, query: { limit?: number; types?: EventType[]; after?: string }) {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const types = query.types ? [...query.types].sort() : null;
    const scope = ['events', types];
    // The cursor holds a place in (xid, seq) order (`x`, `s`); one from before that order holds
    // `s` alone and is read as the place just before what could follow it (feedPositionOfSeq).
    let after: repo.FeedPosition = { xid: '0', seq: '0' };
    if (query.after !== undefined) {
      let position: Record<string, unknown>;
      try {
        position = openCursor(await this.cursorKey(), query.after, scope);
      } catch {
        throw invalidAfter();
      }
      const digits = (value: unknown, most: number) => typeof value === 'string' && value.length <= most && /^\d+$/.test(value);
      if (!digits(position.s, 18) || (position.x !== undefined && !digits(position.x, 19))) throw invalidAfter();
      after = position.x === undefined ? await repo.feedPositionOfSeq(this.deps.db, position.s as string) : { xid: position.x as string, seq: position.s as string };
    }
    const permissions = [...caller.permissions];
    const since = new Date(this.deps.clock.now().getTime() - this.deps.config.sweep.retention.eventRetentionS * 1000);
    const rows = await repo.listEvents(this.deps.db, { after, permissions, types: types ?? undefined, since, limit });
    const last = rows.at(-1)?.position ?? after;
    return { data: rows.map((r) => r.payload), next_cursor: sealCursor(await this.cursorKey(), { x: last.xid, s: last.seq }, scope) };
  }
}
