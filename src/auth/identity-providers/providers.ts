// Managing identity providers. Who may: a provider can sign in as anyone whose e-mail
// is of its domains (an existing person is linked by a verified e-mail of those domains), the
// administrators included, and grant the roles its groups map to. So adding, changing or removing
// one needs every permission of the catalogue (an administrator, or the operator), besides the
// operation's identity_providers.manage; and mapping a group to a role needs every permission of
// that role, as granting it would (docs/AUTH.md, the rule). Reading needs identity_providers.manage only.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import { DomainError, invalid, notFound } from '../../errors.js';
import { assertMayActOn, assertMayGrant, type Authority } from '../authority.js';
import { PERMISSIONS } from '../permissions.js';
import { keyringOf } from '../secrets/sealing-keys.js';
import { recordAuditEvent } from '../../audit/recorder.js';
import { auditContext, type Origin } from '../../audit/context.js';
import { changesBetween } from '../../audit/changes.js';
import { lockRolesByName, roleNameKey } from '../../roles/repository.js';
import { permissionsOfRoles } from '../../roles/permissions.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import { cleanName, uniqueNameKey } from '../../text/normalize.js';
import { assertPrecondition, type Precondition } from '../../revisions/precondition.js';
import { serviceSecret } from '../secrets/service-secrets.js';
import { keysetPage } from '../../pagination/keyset-page.js';
import { changedAt } from '../../db/versions.js';
import { resourceId } from '../../uuid.js';
import type { operations } from '../../../generated/openapi.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { openClientSecret, sealClientSecret } from './client-secret.js';
import { discover } from './oidc.js';
import { IssuerRefusedError, type IssuerPolicy } from './provider-network.js';
import * as repo from './repository.js';

export interface ProviderInput {
  name?: string;
  issuer?: string;
  client_id?: string;
  client_secret?: string;
  domains?: string[];
  scopes?: string[];
  groups_claim?: string;
  role_mappings?: { group: string; roles: string[] }[];
  create_unknown_people?: boolean;
  sso_required?: boolean;
  second_factor_amr?: string[];
  second_factor_acr?: string[];
}

/** An id is looked up only when it could be one (any other text is an unknown id, 404). Used by the sign-in's provider_id. */
export const isUuid = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);

const providerNotFound = () => notFound('not_found', 'No identity provider has this id.');
const nameTaken = () => new DomainError('conflict', 'name_taken', 'Another identity provider already has this name.');
const domainTaken = () => new DomainError('conflict', 'domain_taken', 'One of these domains is already answered by another identity provider.');

/** What an identity provider may do to people: only a caller holding every permission may configure one. */
const WHAT = 'An identity provider (it may sign in as anyone of its domains)';

/** Scopes asked for: `openid` first, always. */
const scopesOf = (scopes: readonly string[]) => ['openid', ...scopes.filter((s) => s !== 'openid')];

/** Its scheme and addresses are judged when it is discovered (src/auth/identity-providers/provider-network.ts, `issuerRefused` below). */
function checkIssuer(issuer: string): string {
  // The contract's `format: uri` lets through what WHATWG's URL refuses (`http://` alone): a 400, not a 500.
  const url = URL.canParse(issuer) ? new URL(issuer) : undefined;
  if (!url) throw invalid('validation_failed', 'The issuer is not a URL.', { errors: [{ location: 'request/body/issuer', message: 'is not a URL' }] });
  if (url.search || url.hash) throw invalid('validation_failed', 'The issuer has no query or fragment.', { errors: [{ location: 'request/body/issuer', message: 'has no query or fragment' }] });
  return issuer;
}

/** An issuer the service may not call (plain http, a private or metadata address): what to do about it. */
function issuerRefused(err: IssuerRefusedError, policy: IssuerPolicy) {
  const remedy = err.allowedWhenInsecure && !policy.allowInsecure ? '; for a local development provider set OIDC_ALLOW_INSECURE_ISSUERS=true (never in production)' : '';
  return invalid('issuer_refused', `The issuer ${err.reason}${remedy}.`, { errors: [{ location: 'request/body/issuer', message: err.reason, error_code: 'issuer_refused' }] });
}

/** The fields the audit trail shows: never the secret, only that it changed. */
const audited = (p: { name: string; issuer: string; client_id: string; domains: string[]; scopes: string[]; groups_claim: string; role_mappings: repo.RoleMapping[]; create_unknown_people: boolean; sso_required: boolean; second_factor_amr: string[]; second_factor_acr: string[] }) => ({
  name: p.name,
  issuer: p.issuer,
  client_id: p.client_id,
  domains: [...p.domains].sort(),
  scopes: p.scopes,
  groups_claim: p.groups_claim,
  role_mappings: p.role_mappings.map((m) => `${m.group} -> ${[...m.roles].sort().join(', ')}`).sort(),
  create_unknown_people: p.create_unknown_people,
  sso_required: p.sso_required,
  second_factor_amr: p.second_factor_amr,
  second_factor_acr: p.second_factor_acr,
});

/** What a provider is added from: the contract's IdentityProviderCreateRequest. */
export type NewProvider = Required<Pick<ProviderInput, 'name' | 'issuer' | 'client_id' | 'client_secret' | 'domains'>> & ProviderInput;

/** A provider to add, as `IdentityProviderService.draft` checked it: its id, its client secret sealed under it (the plain secret is not kept). */
export interface ProviderDraft {
  id: string;
  name: string;
  issuer: string;
  fields: Omit<NewProvider, 'client_secret'>;
  sealed: ReturnType<typeof sealClientSecret>;
}

type ListQuery = NonNullable<operations['listIdentityProviders']['parameters']['query']>;
export const DEFAULT_PAGE_SIZE = 50;

/** The mapped roles, locked and judged: each must exist, and the caller must hold what each grants. */
async function lockMappedRoles(trx: Kysely<Database>, authority: Authority, mappings: readonly { group: string; roles: string[] }[]) {
  const names = [...new Set(mappings.flatMap((m) => m.roles))];
  const roles = await lockRolesByName(trx, names);
  const byKey = new Map(roles.map((r) => [roleNameKey(r.name), r]));
  const unknown = names.filter((n) => !byKey.has(roleNameKey(n)));
  if (unknown.length) {
    throw invalid('unknown_role', `No role is named ${unknown.join(', ')}.`, { errors: unknown.map((n) => ({ location: 'request/body/role_mappings', message: `no role named ${n}` })) });
  }
  assertMayGrant(authority, permissionsOfRoles(roles), 'a group mapping');
  // One group listed twice is one group: its roles are merged.
  const merged = new Map<string, Set<string>>();
  for (const m of mappings) for (const n of m.roles) (merged.get(m.group) ?? merged.set(m.group, new Set()).get(m.group)!).add(byKey.get(roleNameKey(n))!.id);
  return [...merged].map(([group, ids]) => ({ group, roleIds: [...ids] }));
}

async function writeDetails(trx: Kysely<Database>, id: string, input: ProviderInput, authority: Authority) {
  const domains = input.domains?.map((d) => d.toLowerCase());
  if (domains) await repo.replaceDomains(trx, id, [...new Set(domains)]);
  if (input.role_mappings) await repo.replaceMappings(trx, id, await lockMappedRoles(trx, authority, input.role_mappings));
}

const translate = (err: unknown): never => {
  if (isUniqueViolation(err, 'identity_providers_name_key_key')) throw nameTaken();
  if (isUniqueViolation(err, 'identity_provider_domains_pkey')) throw domainTaken();
  throw err;
};

export class IdentityProviderService {
  // From configuration, never from the database (src/auth/secrets/sealing-keys.ts).
  private readonly keys: ReturnType<typeof keyringOf>;
  private readonly cursorKey: ReturnType<typeof serviceSecret>;

  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>) {
    this.keys = keyringOf(deps.config);
    this.cursorKey = serviceSecret(deps.db, deps.clock, 'cursor_signing');
  }

  /** Anything that is not a provider's id (malformed, or another resource's) is not found, like an unknown one; ids in capitals find it. */
  async get(id: string) {
    const known = resourceId(id);
    const provider = known && (await repo.findProvider(this.deps.db, known));
    if (!provider) throw providerNotFound();
    return provider;
  }

  async list(query: ListQuery) {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const after = query.cursor === undefined ? undefined : decodeCursor(await this.cursorKey(), query.cursor);
    const rows = await repo.listProvidersPage(this.deps.db, { limit, ...(after ? { after } : {}) });
    return keysetPage(rows, limit, async (last) => encodeCursor(await this.cursorKey(), { key: last.name_key, id: last.id }));
  }
  /**
   * A provider to add, checked and its issuer's discovery document read (the caller's right to
   * configure one first: no outside call for whoever may not), its client secret sealed under its
   * new id: done before the create's transaction, holding no connection while the issuer answers.
   */
  async draft(authority: Authority, input: NewProvider): Promise<ProviderDraft> {
    assertMayActOn(authority, PERMISSIONS, WHAT);
    const name = cleanName(input.name, { location: 'request/body/name', maxLength: 64 });
    const issuer = checkIssuer(input.issuer);
    await this.assertDiscoverable(issuer, input.client_id, input.client_secret);
    const id = randomUUID();
    const { client_secret: clientSecret, ...fields } = input;
    return { id, name, issuer, fields, sealed: sealClientSecret(this.keys, id, clientSecret) };
  }

  /** The provider drafted, made in the transaction it is given, which its caller opened and ends. */
  async create(trx: Kysely<Database>, authority: Authority, draft: ProviderDraft, origin: Origin): Promise<repo.Provider> {
    const { id, name, issuer, fields } = draft;
    try {
      const now = this.deps.clock.now();
      await trx
        .insertInto('identity_providers')
        .values({
          id,
          name,
          name_key: uniqueNameKey(name),
          issuer,
          client_id: fields.client_id,
          ...draft.sealed,
          scopes: scopesOf(fields.scopes ?? ['openid', 'email', 'profile']),
          groups_claim: fields.groups_claim ?? 'groups',
          create_unknown_people: fields.create_unknown_people ?? false,
          sso_required: fields.sso_required ?? false,
          second_factor_amr: fields.second_factor_amr ?? [],
          second_factor_acr: fields.second_factor_acr ?? [],
          created_at: now,
          updated_at: now,
        })
        .execute();
      await writeDetails(trx, id, { ...fields, role_mappings: fields.role_mappings ?? [] }, authority);
      const made = (await repo.findProvider(trx, id))!;
      await recordAuditEvent(trx, {
        type: 'identity_provider_created',
        at: now,
        context: auditContext(authority, origin),
        target: { type: 'identity_provider', id, label: name },
        changes: { before: null, after: audited(made) },
      });
      return made;
    } catch (err) {
      return translate(err);
    }
  }

  async update(authority: Authority, rawId: string, input: ProviderInput, origin: Origin, precondition?: Precondition) {
    assertMayActOn(authority, PERMISSIONS, WHAT);
    const current = await this.get(rawId);
    const id = current.id;
    const name = input.name === undefined ? undefined : cleanName(input.name, { location: 'request/body/name', maxLength: 64 });
    const issuer = input.issuer === undefined ? undefined : checkIssuer(input.issuer);
    // A new issuer or client is read before anything is written, as at creation.
    if (issuer !== undefined || input.client_id !== undefined || input.client_secret !== undefined) {
      const secret = input.client_secret ?? openClientSecret(this.keys, current);
      await this.assertDiscoverable(issuer ?? current.issuer, input.client_id ?? current.client_id, secret);
    }
    const sealed = input.client_secret === undefined ? undefined : sealClientSecret(this.keys, id, input.client_secret);
    return this.deps.db
      .transaction()
      .execute(async (trx) => {
        if (!(await repo.lockProvider(trx, id))) throw providerNotFound();
        assertPrecondition(precondition, (await repo.findProviderRevision(trx, id))!);
        const before = (await repo.findProvider(trx, id))!;
        const now = this.deps.clock.now();
        const fields = {
          ...(name === undefined ? {} : { name, name_key: uniqueNameKey(name) }),
          ...(issuer === undefined ? {} : { issuer }),
          ...(input.client_id === undefined ? {} : { client_id: input.client_id }),
          ...sealed,
          ...(input.scopes === undefined ? {} : { scopes: scopesOf(input.scopes) }),
          ...(input.groups_claim === undefined ? {} : { groups_claim: input.groups_claim }),
          ...(input.create_unknown_people === undefined ? {} : { create_unknown_people: input.create_unknown_people }),
          ...(input.sso_required === undefined ? {} : { sso_required: input.sso_required }),
          ...(input.second_factor_amr === undefined ? {} : { second_factor_amr: input.second_factor_amr }),
          ...(input.second_factor_acr === undefined ? {} : { second_factor_acr: input.second_factor_acr }),
        };
        if (Object.keys(fields).length > 0) await trx.updateTable('identity_providers').set(fields).where('id', '=', id).execute();
        await writeDetails(trx, id, input, authority);
        const after = (await repo.findProvider(trx, id))!;
        const changes = changesBetween(audited(before), audited(after));
        // A change that changes nothing leaves the provider as it was (updated_at too: what a GET answers, a PATCH accepts).
        if (!changes && !sealed) return after;
        await trx.updateTable('identity_providers').set(changedAt(now)).where('id', '=', id).execute();
        await recordAuditEvent(trx, {
          type: 'identity_provider_updated',
          at: now,
          context: auditContext(authority, origin),
          target: { type: 'identity_provider', id, label: after.name },
          details: { client_secret_changed: sealed !== undefined },
          changes: changes ?? { before: {}, after: {} },
        });
        return (await repo.findProvider(trx, id))!;
      })
      .catch(translate);
  }

  async remove(authority: Authority, rawId: string, origin: Origin, precondition?: Precondition) {
    assertMayActOn(authority, PERMISSIONS, WHAT);
    const id = resourceId(rawId);
    await this.deps.db.transaction().execute(async (trx) => {
      if (!id || !(await repo.lockProvider(trx, id))) throw providerNotFound();
      assertPrecondition(precondition, (await repo.findProviderRevision(trx, id))!);
      const before = (await repo.findProvider(trx, id))!;
      await trx.deleteFrom('identity_providers').where('id', '=', id).execute();
      await recordAuditEvent(trx, {
        type: 'identity_provider_deleted',
        at: this.deps.clock.now(),
        context: auditContext(authority, origin),
        target: { type: 'identity_provider', id, label: before.name },
        changes: { before: audited(before), after: null },
      });
    });
  }

  /** Reads the issuer's discovery document (no database connection held meanwhile), when the issuer may be called at all. */
  private async assertDiscoverable(issuer: string, clientId: string, clientSecret: string) {
    const policy = this.deps.config.oidc.issuers;
    try {
      await discover({ issuer, clientId, clientSecret }, policy);
    } catch (err) {
      if (err instanceof IssuerRefusedError) throw issuerRefused(err, policy);
      throw invalid('issuer_unreachable', `The issuer's discovery document could not be read or names another issuer (${err instanceof Error ? err.message : 'error'}).`);
    }
  }
}
