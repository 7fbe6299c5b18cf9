// Issuing, changing, rotating and revoking API keys. A secret is made by draft() or
// draftRotation(), before the transaction, and shown once, in the result of create() or rotate();
// only its digest is stored. Every change is recorded in the audit trail in the transaction that
// makes it (who, from where, the fields before and after; never a secret).
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ServiceDeps } from '../dependencies.js';
import { DomainError, fieldError } from '../errors.js';
import { parseInstant } from '../instant.js';
import { assertNotApiKey } from '../auth/caller.js';
import { translateUniqueViolation } from '../db/unique-violation.js';
import { assertMayActOn, assertMayGrant, type Authority } from '../auth/authority.js';
import * as keys from './repository.js';
import { newApiKeySecret } from './secret.js';
import { recordAuditEvent, type AuditEventInput } from '../audit/recorder.js';
import { presentApiKey } from './presenter.js';
import { COMMAND_LINE, auditContext, type Origin } from '../audit/context.js';
import { changesBetween, iso } from '../audit/changes.js';
import { cleanName } from '../text/normalize.js';
import { resourceIdOr } from '../uuid.js';
import { assertPrecondition, type Precondition } from '../revisions/precondition.js';
import { allowlistNarrows, normalizeAllowedIps } from './allowed-ips.js';
import type { RateLimit } from '../limits/limiter.js';
import { readUsage, USAGE_RETENTION_DAYS, type UsageHour } from './usage.js';
import { PERIOD_OF, remainingNow, type UsesRefill } from './uses.js';
import { checkedMetadata } from './metadata.js';

/** A key made or rotated: its row as shown, and the secret, which leaves this module here only. */
export interface KeyWithSecret {
  key: keys.ShownApiKey;
  secret: string;
}

/** What a key is made from, as the contract's ApiKeyCreateRequest says it. */
export interface KeyInput {
  name: string;
  expires_at?: string;
  permissions: string[];
  rate_limit?: RateLimitInput | null;
  allowed_ips?: string[] | null;
  remaining_uses?: number | null;
  uses_refill?: UsesRefill | null;
  metadata?: Record<string, unknown> | null;
}

/** A key to make, as `ApiKeyService.draft` checked it, with its secret; `now` is when it was drafted, and the key's creation time. */
export interface KeyDraft {
  name: string;
  permissions: string[];
  expiresAt: Date | null;
  limits: LimitColumns;
  uses: Uses | null;
  metadata: Record<string, unknown> | null;
  fresh: ReturnType<typeof newApiKeySecret>;
  now: Date;
}

/** A rotation to make, as `ApiKeyService.draftRotation` checked it, with the new secret. */
export interface KeyRotation {
  id: string;
  graceSeconds: number;
  fresh: ReturnType<typeof newApiKeySecret>;
  now: Date;
}

const HOUR_MS = 3_600_000;

/** A key's limit as the contract writes it. */
export interface RateLimitInput {
  requests: number;
  per_seconds: number;
}

const notFound = () => new DomainError('not_found', 'not_found', 'No API key has this id.');
const revoked = () => new DomainError('conflict', 'api_key_revoked', 'This API key is revoked; create a new one.');
const nameTaken = () => new DomainError('conflict', 'name_taken', 'Another API key in use already has this name.');

function parseExpiry(value: string | null | undefined, now: Date): Date | null | undefined {
  if (value === undefined || value === null) return value;
  const at = parseInstant(value, 'request/body/expires_at');
  if (at <= now) {
    throw new DomainError('invalid', 'expiration_in_past', 'The expiration date must be in the future.', {
      errors: [{ location: 'request/body/expires_at', message: 'must be in the future' }],
    });
  }
  return at;
}

const translateUnique = <T>(work: () => Promise<T>) => translateUniqueViolation('api_keys_name_key_key', nameTaken, work);

/** A key's name as it is stored (src/text/normalize.ts); names are compared by their key. */
const cleanKeyName = (name: string) => cleanName(name, { location: 'request/body/name', maxLength: 100 });

type LimitColumns = { rate_limit_requests: number | null; rate_limit_per_seconds: number | null; allowed_ips: string[] | null };

/** The key's fields the audit trail shows: its permissions sorted, dates as the API prints them. */
const audited = (key: { name: string; permissions: string[]; expires_at: Date | null } & LimitColumns) => ({
  name: key.name,
  permissions: [...key.permissions].sort(),
  expires_at: iso(key.expires_at),
  // Shown only when set: a key without either reads as it did before keys had them.
  ...(key.rate_limit_requests !== null && { rate_limit: `${key.rate_limit_requests}/${key.rate_limit_per_seconds}s` }),
  ...(key.allowed_ips !== null && { allowed_ips: key.allowed_ips }),
});

/** The columns of a limit and a list given in a request (undefined: unchanged). */
function limitColumns(input: { rate_limit?: RateLimitInput | null; allowed_ips?: string[] | null }): Partial<LimitColumns> {
  return {
    ...(input.rate_limit !== undefined && {
      rate_limit_requests: input.rate_limit?.requests ?? null,
      rate_limit_per_seconds: input.rate_limit?.per_seconds ?? null,
    }),
    ...(input.allowed_ips !== undefined && { allowed_ips: input.allowed_ips === null ? null : normalizeAllowedIps(input.allowed_ips) }),
  };
}

/** A key's uses as the service reasons about them: its count now and its refill (null: not usage-limited). */
interface Uses {
  remaining: number;
  refill: UsesRefill | null;
}

/** The uses a request asks for (undefined: unchanged), checked: a refill needs a count. */
function usesInput(input: { remaining_uses?: number | null; uses_refill?: UsesRefill | null }, current: Uses | null): Uses | null | undefined {
  if (input.remaining_uses === undefined && input.uses_refill === undefined) return undefined;
  const remaining = input.remaining_uses === undefined ? (current?.remaining ?? null) : input.remaining_uses;
  const refill = input.uses_refill !== undefined ? input.uses_refill : remaining === null ? null : (current?.refill ?? null);
  if (remaining === null) {
    if (refill) throw fieldError('body', 'uses_refill', 'needs remaining_uses: a key without a count of uses has nothing to refill', 'refill_without_uses');
    return null;
  }
  return { remaining, refill };
}

/**
 * Whether uses `next` let the key do no more than `current` (null: not usage-limited, so any
 * count tightens, and none loosens a limited key): no more uses now, and no refill that gives
 * more (added, a larger amount, or daily where it was monthly).
 */
export function usesTighten(next: Uses | null, current: Uses | null): boolean {
  if (current === null) return true;
  if (next === null) return false;
  if (next.remaining > current.remaining) return false;
  if (next.refill === null) return true;
  if (current.refill === null) return false;
  return next.refill.amount <= current.refill.amount && !(next.refill.interval === 'daily' && current.refill.interval === 'monthly');
}

/** The uses of a stored row (api_key_uses), as of `now`. */
const usesOf = (row: { remaining: number; refill_interval: 'day' | 'month' | null; refill_amount: number | null; refilled_at: Date } | undefined, now: Date): Uses | null =>
  row === undefined
    ? null
    : { remaining: remainingNow(row, now), refill: row.refill_interval === null ? null : { interval: row.refill_interval === 'day' ? 'daily' : 'monthly', amount: row.refill_amount! } };

/** As the audit trail shows uses: the count, and the refill as `amount/interval`. */
const auditedUses = (uses: Uses | null) => ({
  remaining_uses: uses?.remaining ?? null,
  uses_refill: uses?.refill ? `${uses.refill.amount}/${uses.refill.interval}` : null,
});

const storedUses = (uses: Uses) => ({
  remaining: uses.remaining,
  refill_interval: uses.refill ? PERIOD_OF[uses.refill.interval] : null,
  refill_amount: uses.refill?.amount ?? null,
});

const limitOf = (row: LimitColumns): RateLimit | null =>
  row.rate_limit_requests === null ? null : { requests: row.rate_limit_requests, perSeconds: row.rate_limit_per_seconds! };

/**
 * Whether limit `next` lets through no more than `current` in any window (null: the deployment's
 * default for keys, or no limit at all): the same window length, no more requests. The limiter
 * counts each window length on a counter of its own (src/limits/limiter.ts keys them by it), so
 * a new length starts from nothing in the window under way: 10/60 s to 5/30 s would give a key
 * that spent its 10 five more at once. Any other length is therefore a loosening, asked of
 * whoever could loosen; the request path keeps its one statement-free count per window length.
 */
export function rateLimitTightens(next: RateLimit | null, current: RateLimit | null, fallback: RateLimit | null): boolean {
  const n = next ?? fallback;
  const c = current ?? fallback;
  if (c === null) return true;
  if (n === null) return false;
  return n.perSeconds === c.perSeconds && n.requests <= c.requests;
}

/** An event about key `key` by `authority`; the person concerned is the key's creator. */
const keyEvent = (authority: Authority, origin: Origin, key: { id: string; name: string; created_by: string | null }, at: Date) =>
  ({ at, context: auditContext(authority, origin), target: { type: 'api_key', id: key.id, label: key.name }, userId: key.created_by }) satisfies Partial<AuditEventInput>;

export class ApiKeyService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly defaultRateLimit: RateLimit | null = null,
  ) {}

  async get(id: string) {
    id = resourceIdOr(id, notFound);
    const row = await keys.findKeyById(this.deps.db, id, this.deps.clock.now());
    if (!row) throw notFound();
    return row;
  }

  /**
   * The key's use per hour over [from, until), every hour present (zeros included): by default
   * the 7 days up to the end of the current hour; at most the 90 days the counts are kept.
   */
  async usage(id: string, span: { from?: string; until?: string } = {}): Promise<UsageHour[]> {
    id = resourceIdOr(id, notFound);
    const now = this.deps.clock.now().getTime();
    const ceilHour = (ms: number) => Math.ceil(ms / HOUR_MS) * HOUR_MS;
    const until = span.until === undefined ? ceilHour(now + 1) : ceilHour(parseInstant(span.until, 'request/query/until').getTime());
    const from = span.from === undefined ? until - 7 * 24 * HOUR_MS : Math.floor(parseInstant(span.from, 'request/query/from').getTime() / HOUR_MS) * HOUR_MS;
    if (!(from < until) || until - from > USAGE_RETENTION_DAYS * 24 * HOUR_MS) {
      throw new DomainError('invalid', 'invalid_span', `from must come before until, at most ${USAGE_RETENTION_DAYS} days apart.`, {
        errors: [{ location: 'request/query/from', message: `must be before until, at most ${USAGE_RETENTION_DAYS} days earlier` }],
      });
    }
    await this.get(id);
    const rows = new Map((await readUsage(this.deps.db, id, new Date(from), new Date(until))).map((r) => [r.hour.getTime(), r]));
    const hours: UsageHour[] = [];
    for (let at = from; at < until; at += HOUR_MS) {
      hours.push(rows.get(at) ?? { hour: new Date(at), allowed: 0, rate_limited: 0, ip_refused: 0, permission_refused: 0 });
    }
    return hours;
  }

  list(filter: { expiringWithinDays?: number } = {}) {
    const days = filter.expiringWithinDays;
    const now = this.deps.clock.now();
    return keys.listKeys(this.deps.db, now, days === undefined ? {} : { expiringBefore: new Date(now.getTime() + days * 86_400_000) });
  }

  /**
   * A key to make, checked, with its secret: done before the create's transaction, holding no
   * connection. By a signed-in user (the key is then worth at most what they hold, now and later)
   * or the operator (created_by null: the key keeps its set). An API key cannot make keys: its key
   * would have no creator, so no one to be limited by.
   */
  draft(authority: Authority, sent: KeyInput): KeyDraft {
    assertNotApiKey(authority);
    const input = { ...sent, name: cleanKeyName(sent.name) };
    const now = this.deps.clock.now();
    const expiresAt = parseExpiry(input.expires_at, now) ?? null;
    const limits = { rate_limit_requests: null, rate_limit_per_seconds: null, allowed_ips: null, ...limitColumns(input) };
    const uses = usesInput(input, null) ?? null;
    const metadata = checkedMetadata(input.metadata) ?? null;
    assertMayGrant(authority, input.permissions, 'an API key');
    return { name: input.name, permissions: [...new Set(input.permissions)], expiresAt, limits, uses, metadata, fresh: newApiKeySecret(), now };
  }

  /** The key drafted, made in the transaction it is given, which its caller opened and ends. */
  async create(trx: Kysely<Database>, authority: Authority, draft: KeyDraft, origin: Origin = COMMAND_LINE): Promise<KeyWithSecret> {
    const { fresh, uses, metadata, now } = draft;
    return translateUnique(async () => {
      const key = {
        name: draft.name,
        permissions: draft.permissions,
        created_by: authority.kind === 'user' ? authority.userId : null,
        expires_at: draft.expiresAt,
        ...draft.limits,
      };
      const keyId = await keys.insertKey(trx, { ...key, metadata, display_prefix: fresh.display_prefix, last_characters: fresh.last_characters, now });
      await keys.insertSecret(trx, keyId, fresh.digest, now);
      if (uses) await keys.setKeyUses(trx, keyId, storedUses(uses), now);
      const after = { ...audited(key), ...(uses && auditedUses(uses)), ...(metadata && { metadata }) };
      await recordAuditEvent(trx, { type: 'api_key_created', ...keyEvent(authority, origin, { id: keyId, ...key }, now), changes: { before: null, after } });
      return { key: (await keys.findKeyById(trx, keyId, now))!, secret: fresh.secret };
    });
  }

  async update(
    authority: Authority,
    id: string,
    sent: {
      name?: string;
      expires_at?: string | null;
      permissions?: string[];
      rate_limit?: RateLimitInput | null;
      allowed_ips?: string[] | null;
      remaining_uses?: number | null;
      uses_refill?: UsesRefill | null;
      metadata?: Record<string, unknown> | null;
    },
    origin: Origin = COMMAND_LINE,
    precondition?: Precondition,
  ) {
    id = resourceIdOr(id, notFound);
    const input = sent.name === undefined ? sent : { ...sent, name: cleanKeyName(sent.name) };
    const now = this.deps.clock.now();
    const expiresAt = parseExpiry(input.expires_at, now);
    const limits = limitColumns(input);
    const metadata = checkedMetadata(input.metadata);
    await translateUnique(() =>
      this.deps.db.transaction().execute(async (trx) => {
        const row = await keys.lockKey(trx, id);
        if (!row) throw notFound();
        // Read under the key's lock: a concurrent change of the uses waits; spending does not
        // (it locks only the uses row), so the count compared is the one of this moment. Locked
        // before the If-Match is checked: a spend in flight (another process's statement) ends
        // first, and its count is in the revision compared, not set back by this write.
        const usesRow = await keys.lockKeyUses(trx, id);
        if (precondition) assertPrecondition(precondition, (await keys.findKeyRevision(trx, id, now))!);
        if (row.revoked_at) throw revoked();
        const currentUses = usesOf(usesRow, now);
        const nextUses = usesInput(input, currentUses);
        const widened = input.permissions?.find((p) => !row.permissions.includes(p));
        if (widened) {
          throw new DomainError('invalid', 'permissions_not_narrowed', `A key's permissions can only be narrowed; it does not hold ${widened}.`, {
            errors: [{ location: 'request/body/permissions', message: `${widened} is not among the key's permissions` }],
          });
        }
        // Prolonging keeps rights alive, and loosening a limit or an allowlist lets the key use
        // them more: both need every permission the key will hold. Renaming, narrowing, an
        // earlier date and a tighter limit or list only take away, as revoking does.
        const prolongs = expiresAt === null ? row.expires_at !== null : expiresAt !== undefined && row.expires_at !== null && expiresAt > row.expires_at;
        const next = { ...row, ...limits };
        // More uses (a higher count, a limit removed, a refill that gives more) prolong the
        // key's rights as a later date does.
        const loosens =
          !rateLimitTightens(limitOf(next), limitOf(row), this.defaultRateLimit) ||
          !allowlistNarrows(next.allowed_ips, row.allowed_ips) ||
          (nextUses !== undefined && !usesTighten(nextUses, currentUses));
        if (prolongs || loosens) assertMayActOn(authority, input.permissions ?? row.permissions, 'This API key');
        await keys.updateKey(trx, id, { name: input.name, expires_at: expiresAt, permissions: input.permissions, ...limits, metadata, now });
        if (nextUses !== undefined) {
          // The refill alone: the count is not set, so the uses processes hold are given back to it.
          if (input.remaining_uses === undefined && nextUses && currentUses) await keys.setKeyRefill(trx, id, storedUses(nextUses), now);
          else await keys.setKeyUses(trx, id, nextUses && storedUses(nextUses), now);
        }
        const after = {
          name: input.name,
          permissions: input.permissions && [...input.permissions].sort(),
          expires_at: expiresAt === undefined ? undefined : iso(expiresAt),
          ...(input.rate_limit !== undefined && { rate_limit: audited(next).rate_limit ?? null }),
          ...(input.allowed_ips !== undefined && { allowed_ips: next.allowed_ips }),
          ...(nextUses !== undefined && auditedUses(nextUses)),
          ...(metadata !== undefined && { metadata }),
        };
        const changes = changesBetween({ ...audited(row), ...auditedUses(currentUses), metadata: row.metadata }, after);
        if (changes) await recordAuditEvent(trx, { type: 'api_key_updated', ...keyEvent(authority, origin, { ...row, name: input.name ?? row.name }, now), changes });
      }),
    );
    return this.get(id);
  }

  /**
   * Idempotent: revoking a revoked key changes nothing. The one rights-changing operation without
   * a check on the target: it only removes rights, and a leaked key must be revocable by any key
   * manager at once (docs/AUTH.md).
   */
  async revoke(authority: Authority, id: string, origin: Origin = COMMAND_LINE, precondition?: Precondition) {
    id = resourceIdOr(id, notFound);
    await this.deps.db.transaction().execute(async (trx) => {
      const row = await keys.lockKey(trx, id);
      if (!row) throw notFound();
      if (precondition) assertPrecondition(precondition, (await keys.findKeyRevision(trx, id, this.deps.clock.now()))!);
      if (row.revoked_at) return;
      const now = this.deps.clock.now();
      await keys.updateKey(trx, id, { revoked_at: now, now });
      const revoked = (await keys.findKeyById(trx, id, now))!;
      await recordAuditEvent(trx, {
        type: 'api_key_revoked',
        ...keyEvent(authority, origin, row, now),
        changes: { before: { revoked_at: null }, after: { revoked_at: iso(now) } },
        publish: { data: presentApiKey(revoked) },
      });
    });
  }

  /** A rotation to make, its key's id checked and its new secret made: done before the rotation's transaction. */
  draftRotation(authority: Authority, id: string, graceSeconds = 0): KeyRotation {
    id = resourceIdOr(id, notFound);
    assertNotApiKey(authority);
    return { id, graceSeconds, fresh: newApiKeySecret(), now: this.deps.clock.now() };
  }

  /**
   * The rotation drafted, made in the transaction it is given, which its caller opened and ends.
   * The caller receives the new secret, so they must hold every
   * permission of the key, grace period or not, and the key becomes theirs (created_by): it is
   * worth at most what they hold from now on and stops when they are disabled, as a key they
   * created would. Bound to its former creator, it would outlive the person who took its secret.
   */
  async rotate(trx: Kysely<Database>, authority: Authority, rotation: KeyRotation, origin: Origin = COMMAND_LINE): Promise<KeyWithSecret> {
    const { id, graceSeconds, fresh, now } = rotation;
    const row = await keys.lockKey(trx, id);
    if (!row) throw notFound();
    if (row.revoked_at) throw revoked();
    assertMayActOn(authority, row.permissions, 'This API key');
    await keys.retireCurrentSecret(trx, id, new Date(now.getTime() + graceSeconds * 1000), now);
    await keys.insertSecret(trx, id, fresh.digest, now);
    const createdBy = authority.kind === 'user' ? authority.userId : null;
    await keys.updateKey(trx, id, { display_prefix: fresh.display_prefix, last_characters: fresh.last_characters, created_by: createdBy, now });
    // The person concerned stays the former creator; taking the key over shows in the changes.
    await recordAuditEvent(trx, {
      type: 'api_key_rotated',
      ...keyEvent(authority, origin, row, now),
      details: { grace_period_seconds: graceSeconds },
      changes: changesBetween(row, { display_prefix: fresh.display_prefix, last_characters: fresh.last_characters, created_by: createdBy }),
    });
    return { key: (await keys.findKeyById(trx, id, now))!, secret: fresh.secret };
  }
}
