// Webhook endpoints: where events go, what they carry, and the secret that signs them (docs/EVENTS.md).
//
// The rule (docs/AUTH.md) applied to events: an endpoint receives only what its owner may read at
// delivery time (src/webhooks/repository.ts, ownerMayRead), and the owner is whoever last chose
// where events go (created the endpoint or changed its URL): otherwise a holder of webhooks.manage
// lacking tasks.read could point someone else's endpoint at their own server and read tasks.
// Whoever holds the secret can sign any event the receiver trusts, so nobody obtains one (by a
// rotation) unless they may read every type the endpoint is subscribed to; a change of URL hands
// out no secret, so it needs nothing more. Subscribing to a type needs the right to read it, so
// nobody is told they subscribed to what they will never receive. Disabling and deleting only
// take away, so any holder of webhooks.manage may.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { components } from '../../generated/openapi.js';
import type { Database } from '../db/schema.js';
import type { Dependencies } from '../dependencies.js';
import type { Principal } from '../auth/principal.js';
import { DomainError, forbidden, invalid } from '../errors.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { auditContext, type Origin } from '../audit/context.js';
import { changesBetween } from '../audit/changes.js';
import { EVENT_PERMISSIONS, permissionOfEventType } from '../audit/outbox.js';
import { assertMayGrant, lacking } from '../auth/authority.js';
import { keyringOf } from '../auth/secrets/sealing-keys.js';
import { cleanText } from '../text/normalize.js';
import { resourceId } from '../uuid.js';
import { assertPrecondition, type Precondition } from '../revisions/precondition.js';
import * as repo from './repository.js';
import { newSigningSecret, sealUnderCurrent } from './secrets.js';
import { urlRefusal, type UrlPolicy } from './ssrf.js';

export type WebhookEndpointResource = components['schemas']['WebhookEndpoint'];
type EventType = components['schemas']['EventType'];
type KeyStyle = components['schemas']['WebhookKeyStyle'];

const DEFAULT_GRACE_S = 86_400;

export const endpointNotFound = () => new DomainError('not_found', 'not_found', 'No webhook endpoint has this id.');
const urlRefused = (reason: string) =>
  invalid('webhook_url_refused', `The URL ${reason}.`, { errors: [{ location: 'request/body/url', message: reason, error_code: 'webhook_url_refused' }] });

export interface EndpointInput {
  url?: string;
  description?: string | null;
  event_types?: EventType[];
  key_style?: KeyStyle;
  enabled?: boolean;
}

/** Until when a rotated-out secret still signs; null once it no longer does (a change of the representation with no write). */
const rotationEndsAt = (e: { previous_secret_until: Date | null }, now: Date) =>
  e.previous_secret_until && e.previous_secret_until > now ? e.previous_secret_until.toISOString() : null;

/** The endpoint's revision (its ETag): what the database keeps, and whether a rotation still shows (docs/SAFE-WRITES.md). */
export const endpointRevision = (e: { stored_revision: string; previous_secret_until: Date | null }, now: Date) => `${e.stored_revision}/${rotationEndsAt(e, now) ?? ''}`;

/** An endpoint as shown, with its revision (the router answers it as the ETag). */
export interface ShownEndpoint {
  endpoint: WebhookEndpointResource;
  revision: string;
}

/** An endpoint to add, as `WebhookEndpointService.draft` checked it: its id, its fields, its signing secret and that secret sealed. */
export interface EndpointDraft {
  id: string;
  fields: { url: string; description: string | null; event_types: EventType[]; key_style: KeyStyle; enabled: boolean };
  secret: string;
  sealed: Buffer;
  keyId: string;
}

const shown = (e: repo.ListedEndpoint, now: Date): ShownEndpoint => ({ endpoint: presentEndpoint(e, now), revision: endpointRevision(e, now) });

export function presentEndpoint(e: repo.ListedEndpoint, now: Date): WebhookEndpointResource {
  const owner = e.created_by_user_id ? { type: 'user' as const, id: e.created_by_user_id } : { type: 'api_key' as const, id: e.created_by_api_key_id! };
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    event_types: e.event_types as EventType[],
    key_style: e.key_style as KeyStyle,
    enabled: e.enabled,
    disabled_reason: e.disabled_reason,
    created_by: { ...owner, label: e.owner_label ?? '' },
    created_at: e.created_at.toISOString(),
    updated_at: e.updated_at.toISOString(),
    secret_rotation_ends_at: rotationEndsAt(e, now),
  };
}

const ownerOf = (caller: Principal) =>
  caller.kind === 'user' ? { created_by_user_id: caller.userId, created_by_api_key_id: null } : { created_by_user_id: null, created_by_api_key_id: caller.apiKeyId };

/** Subscribing to a type needs the permission that reading it needs. */
function assertMayRead(caller: Principal, types: readonly string[]) {
  assertMayGrant(caller, types.map((t) => permissionOfEventType(t)!), 'a subscription to events');
}

/**
 * Whoever holds an endpoint's signing secret can sign any event its receiver trusts: every type the
 * endpoint is subscribed to (required even for a type the owner lost, which the owner may get
 * back), and every type its owner may read (the receiver expects those too: narrowing the
 * subscription first and rotating after must not hand the secret over). So obtaining one needs the
 * permission of each.
 */
function assertMayHoldSecret(caller: Principal, permissions: readonly string[]) {
  const missing = lacking(caller, [...new Set(permissions)]);
  if (missing.length === 0) return;
  throw forbidden('permission_denied', `A new secret of this endpoint signs events that need ${missing.join(', ')}: permissions you do not have.`, {
    required_permission: missing[0],
    missing_permissions: missing,
  });
}

const cleanDescription = (value: string | null | undefined) =>
  value === undefined ? undefined : value === null ? null : cleanText(value, { location: 'request/body/description', maxLength: 500 }) || null;

const audited = (e: { url: string; description: string | null; event_types: string[]; key_style: string; enabled: boolean }) => ({
  url: e.url,
  description: e.description,
  event_types: [...e.event_types].sort(),
  key_style: e.key_style,
  enabled: e.enabled,
});

/** An endpoint by any spelling of its id, or 404. */
export async function findEndpointOr404(on: Kysely<Database>, id: string) {
  const known = resourceId(id);
  const found = known ? await repo.findEndpoint(on, known) : undefined;
  if (!found) throw endpointNotFound();
  return found;
}

export class WebhookEndpointService {
  // From configuration, never from the database (src/auth/secrets/sealing-keys.ts).
  private readonly keys: ReturnType<typeof keyringOf>;

  constructor(
    private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>,
    private readonly policy: UrlPolicy,
  ) {
    this.keys = keyringOf(deps.config);
  }

  async list() {
    const now = this.deps.clock.now();
    return (await repo.listEndpoints(this.deps.db)).map((e) => presentEndpoint(e, now));
  }

  async get(id: string): Promise<ShownEndpoint> {
    return shown(await this.find(this.deps.db, id), this.deps.clock.now());
  }

  /**
   * An endpoint to add, checked (its URL resolved: no connection held meanwhile), with its signing
   * secret made and sealed under its new id: done before the create's transaction.
   */
  async draft(caller: Principal, input: EndpointInput & { url: string; event_types: EventType[] }): Promise<EndpointDraft> {
    assertMayRead(caller, input.event_types);
    await this.assertUrl(input.url);
    const secret = newSigningSecret();
    const id = randomUUID();
    const { sealed, keyId } = sealUnderCurrent(this.keys, id, secret);
    const fields = { url: input.url, description: cleanDescription(input.description) ?? null, event_types: [...input.event_types], key_style: input.key_style ?? 'snake', enabled: input.enabled ?? true };
    return { id, fields, secret, sealed, keyId };
  }

  /** The endpoint drafted, made in the transaction it is given, which its caller opened and ends. */
  async create(trx: Kysely<Database>, caller: Principal, draft: EndpointDraft, origin: Origin): Promise<ShownEndpoint & { secret: string }> {
    const { id, fields } = draft;
    const now = this.deps.clock.now();
    await trx.insertInto('webhook_endpoints').values({ id, ...fields, ...ownerOf(caller), secret_sealed: draft.sealed, secret_key_id: draft.keyId, created_at: now, updated_at: now }).execute();
    await recordAuditEvent(trx, {
      type: 'webhook_endpoint_created',
      at: now,
      context: auditContext(caller, origin),
      target: { type: 'webhook_endpoint', id, label: fields.url },
      changes: { before: null, after: audited(fields) },
    });
    return { ...shown((await repo.findEndpoint(trx, id))!, now), secret: draft.secret };
  }

  async update(caller: Principal, id: string, input: EndpointInput, origin: Origin, precondition?: Precondition): Promise<ShownEndpoint> {
    if (input.url !== undefined) await this.assertUrl(input.url);
    const wanted = { url: input.url, description: cleanDescription(input.description), event_types: input.event_types, key_style: input.key_style, enabled: input.enabled };
    return this.deps.db.transaction().execute(async (trx) => {
      const known = resourceId(id);
      const row = known ? await repo.lockEndpoint(trx, known) : undefined;
      if (!row) throw endpointNotFound();
      if (precondition) assertPrecondition(precondition, endpointRevision((await repo.findEndpointRevision(trx, row.id))!, this.deps.clock.now()));
      if (wanted.event_types) assertMayRead(caller, wanted.event_types.filter((t) => !row.event_types.includes(t)));
      const changes = changesBetween(audited(row), { ...wanted, event_types: wanted.event_types && [...wanted.event_types].sort() });
      const now = this.deps.clock.now();
      if (changes) {
        const urlChanged = wanted.url !== undefined && wanted.url !== row.url;
        const enabling = wanted.enabled === true && !row.enabled;
        await trx
          .updateTable('webhook_endpoints')
          .set({
            ...(wanted.url !== undefined ? { url: wanted.url } : {}),
            ...(wanted.description !== undefined ? { description: wanted.description } : {}),
            ...(wanted.event_types ? { event_types: [...wanted.event_types] } : {}),
            ...(wanted.key_style ? { key_style: wanted.key_style } : {}),
            ...(wanted.enabled !== undefined ? { enabled: wanted.enabled } : {}),
            ...(enabling ? { disabled_reason: null, failing_since: null } : {}),
            // Who chooses where events go owns what they carry (see the top of this file).
            ...(urlChanged ? ownerOf(caller) : {}),
            updated_at: now,
          })
          .where('id', '=', row.id)
          .execute();
        await recordAuditEvent(trx, { type: 'webhook_endpoint_updated', at: now, context: auditContext(caller, origin), target: { type: 'webhook_endpoint', id: row.id, label: wanted.url ?? row.url }, changes });
      }
      return shown((await repo.findEndpoint(trx, row.id))!, now);
    });
  }

  async remove(caller: Principal, id: string, origin: Origin, precondition?: Precondition) {
    await this.deps.db.transaction().execute(async (trx) => {
      const known = resourceId(id);
      const row = known ? await repo.lockEndpoint(trx, known) : undefined;
      if (!row) throw endpointNotFound();
      if (precondition) assertPrecondition(precondition, endpointRevision((await repo.findEndpointRevision(trx, row.id))!, this.deps.clock.now()));
      await trx.deleteFrom('webhook_endpoints').where('id', '=', row.id).execute();
      await recordAuditEvent(trx, {
        type: 'webhook_endpoint_deleted',
        at: this.deps.clock.now(),
        context: auditContext(caller, origin),
        target: { type: 'webhook_endpoint', id: row.id, label: row.url },
        changes: { before: audited(row), after: null },
      });
    });
  }

  /**
   * A new secret; the previous one keeps signing for the grace period. Only for a caller who may
   * read every subscribed type and every type the owner may read (assertMayHoldSecret). The owner stays: a secret only proves who
   * signs, and the receiver is the URL's (a colleague who reads more must not widen what that
   * receiver gets by a routine rotation; changing the URL takes ownership).
   */
  async rotate(caller: Principal, id: string, gracePeriodS: number | undefined, origin: Origin) {
    const secret = newSigningSecret();
    return this.deps.db.transaction().execute(async (trx) => {
      const known = resourceId(id);
      const row = known ? await repo.lockEndpoint(trx, known) : undefined;
      if (!row) throw endpointNotFound();
      const now = this.deps.clock.now();
      const ownerReads = await repo.permissionsOwnerMayRead(trx, row.id, EVENT_PERMISSIONS, now);
      assertMayHoldSecret(caller, [...row.event_types.map((t) => permissionOfEventType(t)!), ...ownerReads]);
      const grace = gracePeriodS ?? DEFAULT_GRACE_S;
      const { sealed, keyId } = sealUnderCurrent(this.keys, row.id, secret);
      await trx
        .updateTable('webhook_endpoints')
        .set({
          secret_sealed: sealed,
          secret_key_id: keyId,
          previous_secret_sealed: grace > 0 ? row.secret_sealed : null,
          previous_secret_key_id: grace > 0 ? row.secret_key_id : null,
          previous_secret_until: grace > 0 ? new Date(now.getTime() + grace * 1000) : null,
          updated_at: now,
        })
        .where('id', '=', row.id)
        .execute();
      await recordAuditEvent(trx, {
        type: 'webhook_endpoint_secret_rotated',
        at: now,
        context: auditContext(caller, origin),
        target: { type: 'webhook_endpoint', id: row.id, label: row.url },
        details: { grace_period_seconds: grace },
      });
      return { ...shown((await repo.findEndpoint(trx, row.id))!, now), secret };
    });
  }

  private async assertUrl(url: string) {
    const refusal = await urlRefusal(url, this.policy);
    if (refusal) throw urlRefused(refusal);
  }

  private find(on: Kysely<Database>, id: string) {
    return findEndpointOr404(on, id);
  }
}
