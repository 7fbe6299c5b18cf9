// Issuing, changing, rotating and revoking API keys. A secret leaves this module once, in the
// result of create() or rotate(); only its digest is stored. Every change is recorded in the audit
// trail in its own transaction (who, from where, the fields before and after; never a secret).
import type { ServiceDeps } from '../dependencies.js';
import { DomainError } from '../errors.js';
import { assertNotApiKey } from '../auth/caller.js';
import { translateUniqueViolation } from '../db/unique-violation.js';
import { assertMayActOn, assertMayGrant, type Authority } from '../auth/authority.js';
import * as keys from './repository.js';
import { newApiKeySecret } from './secret.js';
import { recordAuditEvent, type AuditEventInput } from '../audit/recorder.js';
import { COMMAND_LINE, auditContext, type Origin } from '../audit/context.js';
import { changesBetween, iso } from '../audit/changes.js';
import { cleanName } from '../text/normalize.js';
import type { Seal } from '../idempotency/service.js';
import { assertPrecondition, type Precondition } from '../revisions/precondition.js';

/** A key made or rotated: its row as shown, and the secret, which leaves this module here only. */
export interface KeyWithSecret {
  key: keys.ShownApiKey;
  secret: string;
}

const notFound = () => new DomainError('not_found', 'not_found', 'No API key has this id.');
const revoked = () => new DomainError('conflict', 'api_key_revoked', 'This API key is revoked; create a new one.');
const nameTaken = () => new DomainError('conflict', 'name_taken', 'Another API key in use already has this name.');

function parseExpiry(value: string | null | undefined, now: Date): Date | null | undefined {
  if (value === undefined || value === null) return value;
  const at = new Date(value);
  if (Number.isNaN(at.getTime()) || at <= now) {
    throw new DomainError('invalid', 'expiration_in_past', 'The expiration date must be in the future.', {
      errors: [{ location: 'request/body/expires_at', message: 'must be in the future' }],
    });
  }
  return at;
}

const translateUnique = <T>(work: () => Promise<T>) => translateUniqueViolation('api_keys_name_key_key', nameTaken, work);

/** A key's name as it is stored (src/text/normalize.ts); names are compared by their key. */
const cleanKeyName = (name: string) => cleanName(name, { location: 'request/body/name', maxLength: 100 });

/** The key's fields the audit trail shows: its permissions sorted, dates as the API prints them. */
const audited = (key: { name: string; permissions: string[]; expires_at: Date | null }) => ({
  name: key.name,
  permissions: [...key.permissions].sort(),
  expires_at: iso(key.expires_at),
});

export function apiKeyService({ db, clock }: ServiceDeps) {
  /** An event about key `key` by `authority`; the person concerned is the key's creator. */
  const keyEvent = (authority: Authority, origin: Origin, key: { id: string; name: string; created_by: string | null }, at: Date) =>
    ({ at, context: auditContext(authority, origin), target: { type: 'api_key', id: key.id, label: key.name }, userId: key.created_by }) satisfies Partial<AuditEventInput>;

  async function get(id: string) {
    const row = await keys.findKeyById(db, id);
    if (!row) throw notFound();
    return row;
  }

  return {
    get,

    list(filter: { expiringWithinDays?: number } = {}) {
      const days = filter.expiringWithinDays;
      return keys.listKeys(db, days === undefined ? {} : { expiringBefore: new Date(clock.now().getTime() + days * 86_400_000) });
    },

    /**
     * By a signed-in user (the key is then worth at most what they hold, now and later) or the
     * operator (created_by null: the key keeps its set). An API key cannot make keys: its key would
     * have no creator, so no one to be limited by.
     * `seal` (an Idempotency-Key's) runs last in the transaction, with the key and its secret.
     */
    async create(authority: Authority, sent: { name: string; expires_at?: string; permissions: string[] }, origin: Origin = COMMAND_LINE, seal?: Seal<KeyWithSecret>): Promise<KeyWithSecret> {
      assertNotApiKey(authority);
      const input = { ...sent, name: cleanKeyName(sent.name) };
      const now = clock.now();
      const expiresAt = parseExpiry(input.expires_at, now) ?? null;
      assertMayGrant(authority, input.permissions, 'an API key');
      const fresh = newApiKeySecret();
      let sealed: KeyWithSecret | undefined;
      const id = await translateUnique(() =>
        db.transaction().execute(async (trx) => {
          const key = {
            name: input.name,
            permissions: [...new Set(input.permissions)],
            created_by: authority.kind === 'user' ? authority.userId : null,
            expires_at: expiresAt,
          };
          const keyId = await keys.insertKey(trx, { ...key, display_prefix: fresh.display_prefix, last_characters: fresh.last_characters, now });
          await keys.insertSecret(trx, keyId, fresh.digest, now);
          await recordAuditEvent(trx, { type: 'api_key_created', ...keyEvent(authority, origin, { id: keyId, ...key }, now), changes: { before: null, after: audited(key) } });
          if (seal) {
            sealed = { key: (await keys.findKeyById(trx, keyId))!, secret: fresh.secret };
            await seal(trx, sealed);
          }
          return keyId;
        }),
      );
      return sealed ?? { key: await get(id), secret: fresh.secret };
    },

    async update(
      authority: Authority,
      id: string,
      sent: { name?: string; expires_at?: string | null; permissions?: string[] },
      origin: Origin = COMMAND_LINE,
      precondition?: Precondition,
    ) {
      const input = sent.name === undefined ? sent : { ...sent, name: cleanKeyName(sent.name) };
      const now = clock.now();
      const expiresAt = parseExpiry(input.expires_at, now);
      await translateUnique(() =>
        db.transaction().execute(async (trx) => {
          const row = await keys.lockKey(trx, id);
          if (!row) throw notFound();
          if (precondition) assertPrecondition(precondition, (await keys.findKeyRevision(trx, id))!);
          if (row.revoked_at) throw revoked();
          const widened = input.permissions?.find((p) => !row.permissions.includes(p));
          if (widened) {
            throw new DomainError('invalid', 'permissions_not_narrowed', `A key's permissions can only be narrowed; it does not hold ${widened}.`, {
              errors: [{ location: 'request/body/permissions', message: `${widened} is not among the key's permissions` }],
            });
          }
          // Prolonging keeps rights alive: it needs every permission the key will hold. Renaming,
          // narrowing and an earlier date only take away, as revoking does.
          const prolongs = expiresAt === null ? row.expires_at !== null : expiresAt !== undefined && row.expires_at !== null && expiresAt > row.expires_at;
          if (prolongs) assertMayActOn(authority, input.permissions ?? row.permissions, 'This API key');
          await keys.updateKey(trx, id, { name: input.name, expires_at: expiresAt, permissions: input.permissions, now });
          const after = { name: input.name, permissions: input.permissions && [...input.permissions].sort(), expires_at: expiresAt === undefined ? undefined : iso(expiresAt) };
          const changes = changesBetween(audited(row), after);
          if (changes) await recordAuditEvent(trx, { type: 'api_key_updated', ...keyEvent(authority, origin, { ...row, name: input.name ?? row.name }, now), changes });
        }),
      );
      return get(id);
    },

    /**
     * Idempotent: revoking a revoked key changes nothing. The one rights-changing operation without
     * a check on the target: it only removes rights, and a leaked key must be revocable by any key
     * manager at once (docs/AUTH.md).
     */
    async revoke(authority: Authority, id: string, origin: Origin = COMMAND_LINE, precondition?: Precondition) {
      await db.transaction().execute(async (trx) => {
        const row = await keys.lockKey(trx, id);
        if (!row) throw notFound();
        if (precondition) assertPrecondition(precondition, (await keys.findKeyRevision(trx, id))!);
        if (row.revoked_at) return;
        const now = clock.now();
        await keys.updateKey(trx, id, { revoked_at: now, now });
        await recordAuditEvent(trx, { type: 'api_key_revoked', ...keyEvent(authority, origin, row, now), changes: { before: { revoked_at: null }, after: { revoked_at: iso(now) } } });
      });
    },

    /**
     * The caller receives the new secret, so they must hold every permission of the key, grace
     * period or not, and the key becomes theirs (created_by): it is worth at most what they hold
     * from now on and stops when they are disabled, as a key they created would. Bound to its
     * former creator, it would outlive the person who took its secret.
     */
    async rotate(authority: Authority, id: string, graceSeconds = 0, origin: Origin = COMMAND_LINE, seal?: Seal<KeyWithSecret>): Promise<KeyWithSecret> {
      assertNotApiKey(authority);
      const now = clock.now();
      const fresh = newApiKeySecret();
      let sealed: KeyWithSecret | undefined;
      await db.transaction().execute(async (trx) => {
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
        if (seal) {
          sealed = { key: (await keys.findKeyById(trx, id))!, secret: fresh.secret };
          await seal(trx, sealed);
        }
      });
      return sealed ?? { key: await get(id), secret: fresh.secret };
    },
  };
}
