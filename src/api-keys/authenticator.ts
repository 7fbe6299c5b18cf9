// Resolves an x-api-key to its principal: a malformed key is refused without touching the
// database; a well-formed one is looked up by its SHA-256 digest: in memory when the process's key
// cache is in step with the database (key-cache.ts: dropped at the commit of any change, through
// LISTEN/NOTIFY), else in one query. Expiry, a previous secret's end of grace and the allowlist are
// judged here on every request, against the clock, whichever answered. The same query
// narrows the key to what its creator holds now (repository.ts, effectivePermissions) and brings
// its rate limit and IP allowlist: a key used from elsewhere is refused here (403 ip_not_allowed).
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.js';
import type { Dependencies } from '../dependencies.js';
import { forbidden, refused } from '../errors.js';
import { digestSecret } from '../auth/secrets/secrets.js';
import { isWellFormedApiKey } from './secret.js';
import { findKeyBySecretDigest, recordKeyUse, type KeyBySecret } from './repository.js';
import { uncounted, type ApiKeyOutcome, type Outcomes } from '../outcomes.js';
import { useNotes } from '../auth/use-notes.js';
import { allowlistAdmits } from './allowed-ips.js';
import type { UsageCounter } from './usage.js';
import { recordAuditEvent } from '../audit/recorder.js';

/** Last-used time and IP are written at most this often per key. */
export const LAST_USED_INTERVAL_MS = 60_000;

/** A refusal by a key's allowlist is recorded at most this often per key and process (a flood must not fill the journal). */
export const IP_REFUSAL_RECORD_INTERVAL_MS = 60_000;

/** The refusal, counted by its outcome. */
function refusal(outcomes: Outcomes, outcome: Exclude<ApiKeyOutcome, 'accepted'>) {
  outcomes.apiKeyAuthentication(outcome);
  switch (outcome) {
    case 'invalid':
      return refused('invalid_api_key', 'The API key is unknown or revoked.');
    case 'expired':
      return refused('api_key_expired', 'The API key has expired.');
    case 'creator_disabled':
      return refused('api_key_creator_disabled', 'The user who created this API key is disabled, so the key no longer works.');
    case 'ip_not_allowed':
      // Names nothing of the list: a caller learns only that this address is not on it.
      return forbidden('ip_not_allowed', 'This API key may not be used from the address this request came from.');
  }
}

export interface KeyRequest {
  ip: string;
  requestId?: string;
  userAgent?: string;
}

/** Finds a key by its secret's digest: the database's answer, or a copy kept in step with it (key-cache.ts). */
export type KeyLookup = (digest: Buffer) => Promise<KeyBySecret | undefined>;

export function apiKeyAuthenticator({ db, clock, logger, outcomes = uncounted }: Dependencies, usage: UsageCounter, lookup: KeyLookup = (digest) => findKeyBySecretDigest(db, digest)) {
  /** Per key: when this process last recorded a refusal, and how many it refused since. */
  const refusals = new Map<string, { recordedAt: number; since: number }>();

  function noteIpRefusal(apiKeyId: string, request: KeyRequest, now: Date) {
    const last = refusals.get(apiKeyId);
    if (last && now.getTime() - last.recordedAt < IP_REFUSAL_RECORD_INTERVAL_MS) {
      last.since++;
      return;
    }
    if (refusals.size >= 10_000) refusals.clear();
    refusals.set(apiKeyId, { recordedAt: now.getTime(), since: 0 });
    const details = { refused_before_unrecorded: last?.since ?? 0 };
    recordAuditEvent(db, {
      type: 'api_key_ip_refused',
      at: now,
      context: { actor: { type: 'api_key', apiKeyId }, requestId: request.requestId ?? null, ip: request.ip, userAgent: request.userAgent ?? null },
      target: { type: 'api_key', id: apiKeyId, label: sql<string | null>`(select name from api_keys where id = ${apiKeyId})` },
      details,
    }).catch((err: unknown) => logger.warn({ err: { message: (err as Error).message }, apiKeyId }, 'could not record a refused API key address'));
  }

  const noteNow = useNotes(LAST_USED_INTERVAL_MS);
  return async (secret: string, request: KeyRequest): Promise<Principal> => {
    if (!isWellFormedApiKey(secret)) throw refusal(outcomes, 'invalid');
    const now = clock.now();
    const key = await lookup(digestSecret(secret));
    if (!key || key.revoked_at || (key.retires_at && key.retires_at <= now)) throw refusal(outcomes, 'invalid');
    if (key.expires_at && key.expires_at <= now) throw refusal(outcomes, 'expired');
    if (key.creator_status === 'disabled') throw refusal(outcomes, 'creator_disabled');
    if (key.allowed_ips !== null && !allowlistAdmits(key.allowed_ips, request.ip)) {
      usage.count(key.id, 'ip_refused', now);
      noteIpRefusal(key.id, request, now);
      throw refusal(outcomes, 'ip_not_allowed');
    }
    if ((!key.last_used_at || now.getTime() - key.last_used_at.getTime() >= LAST_USED_INTERVAL_MS) && noteNow(key.id, now.getTime())) {
      // Not awaited: the answer does not wait for bookkeeping. The UPDATE is conditional, so
      // concurrent requests on several processes still write once a minute at most. (A row from
      // the key cache carries the last use of when it was loaded: noteNow alone spaces the writes;
      // a use recorded notifies nothing, so it does not drop the key from any process.)
      recordKeyUse(db, key.id, { at: now, ip: request.ip, intervalMs: LAST_USED_INTERVAL_MS }).catch((err: unknown) =>
        logger.warn({ err: { message: (err as Error).message }, apiKeyId: key.id }, 'could not record API key use'),
      );
    }
    outcomes.apiKeyAuthentication('accepted');
    const rateLimit = key.rate_limit_requests === null ? null : { requests: key.rate_limit_requests, perSeconds: key.rate_limit_per_seconds! };
    return { kind: 'api_key', apiKeyId: key.id, permissions: new Set(key.permissions), rateLimit, usageLimited: key.usage_limited };
  };
}
