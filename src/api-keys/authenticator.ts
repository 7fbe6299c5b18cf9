// Resolves an x-api-key to its principal: a malformed key is refused without touching the
// database; a well-formed one is looked up by its SHA-256 digest in one query. Nothing is cached,
// so a revocation is effective on the very next request on every server process. The same query
// narrows the key to what its creator holds now (repository.ts, effectivePermissions).
import type { Principal } from '../auth/principal.js';
import type { Dependencies } from '../dependencies.js';
import { refused } from '../errors.js';
import { digestSecret } from '../auth/secrets.js';
import { isWellFormedApiKey } from './secret.js';
import { findKeyBySecretDigest, recordKeyUse } from './repository.js';
import { uncounted, type ApiKeyOutcome, type Outcomes } from '../outcomes.js';
import { useNotes } from '../auth/use-notes.js';

/** Last-used time and IP are written at most this often per key. */
export const LAST_USED_INTERVAL_MS = 60_000;

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
  }
}

export function apiKeyAuthenticator({ db, clock, logger, outcomes = uncounted }: Dependencies) {
  const noteNow = useNotes(LAST_USED_INTERVAL_MS);
  return async (secret: string, request: { ip: string }): Promise<Principal> => {
    if (!isWellFormedApiKey(secret)) throw refusal(outcomes, 'invalid');
    const now = clock.now();
    const key = await findKeyBySecretDigest(db, digestSecret(secret));
    if (!key || key.revoked_at || (key.retires_at && key.retires_at <= now)) throw refusal(outcomes, 'invalid');
    if (key.expires_at && key.expires_at <= now) throw refusal(outcomes, 'expired');
    if (key.creator_status === 'disabled') throw refusal(outcomes, 'creator_disabled');
    if ((!key.last_used_at || now.getTime() - key.last_used_at.getTime() >= LAST_USED_INTERVAL_MS) && noteNow(key.id, now.getTime())) {
      // Not awaited: the answer does not wait for bookkeeping. The UPDATE is conditional, so
      // concurrent requests on several processes still write once a minute at most.
      recordKeyUse(db, key.id, { at: now, ip: request.ip, intervalMs: LAST_USED_INTERVAL_MS }).catch((err: unknown) =>
        logger.warn({ err: { message: (err as Error).message }, apiKeyId: key.id }, 'could not record API key use'),
      );
    }
    outcomes.apiKeyAuthentication('accepted');
    return { kind: 'api_key', apiKeyId: key.id, permissions: new Set(key.permissions) };
  };
}
