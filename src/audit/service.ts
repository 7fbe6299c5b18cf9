// Reading the audit journal: pages for administrators and for each person, and the sign-in counts
// the home page charts. Nothing here writes: reads are not recorded.
import type { ServiceDeps } from '../dependencies.js';
import { countSignInsPerHour, listAuditPage, type AuditFilter } from './repository.js';
import { decodeAuditCursor, encodeAuditCursor } from './cursor.js';
import { serviceSecret } from '../auth/secrets/service-secrets.js';

export const DEFAULT_PAGE_SIZE = 50;
export const CHART_HOURS = 7 * 24;
const HOUR_MS = 3_600_000;

export class AuditService {
  private readonly cursorKey: ReturnType<typeof serviceSecret>;

  constructor(private readonly deps: ServiceDeps) {
    this.cursorKey = serviceSecret(deps.db, deps.clock, 'cursor_signing');
  }

  async list(query: { limit?: number; cursor?: string }, filter: AuditFilter) {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const after = query.cursor === undefined ? undefined : decodeAuditCursor(await this.cursorKey(), query.cursor, filter);
    const rows = await listAuditPage(this.deps.db, { limit, after, filter });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const nextCursor = rows.length > limit && last ? encodeAuditCursor(await this.cursorKey(), { occurredAt: last.cursor_occurred_at, id: String(last.id) }, filter) : null;
    return { page, nextCursor };
  }

  /** The last 7 days, hour by hour, the current hour last. */
  signInsPerHour() {
    const currentHour = Math.floor(this.deps.clock.now().getTime() / HOUR_MS) * HOUR_MS;
    return countSignInsPerHour(this.deps.db, new Date(currentHour - (CHART_HOURS - 1) * HOUR_MS), CHART_HOURS);
  }
}
