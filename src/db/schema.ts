// Table types for Kysely. One interface per table; migrations are the source of the columns. A
// feature's own tables are declared in its folder (`table.ts`), which adds them to `Database`.
import type { ColumnType, Generated } from 'kysely';

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface UsersTable {
  id: Generated<string>;
  email: string;
  /** uniqueNameKey(email) (src/text/normalize.ts): what e-mails are unique by and looked up by. */
  email_key: string;
  first_name: string;
  last_name: string;
  status: ColumnType<'active' | 'disabled', 'active' | 'disabled' | undefined, 'active' | 'disabled'>;
  password_hash: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  last_sign_in_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The password was set by someone else: the user must choose their own before anything else. */
  must_change_password: ColumnType<boolean, boolean | undefined, boolean>;
  /** The row's revision, bumped by a trigger on every change (entity tags, docs/SAFE-WRITES.md). */
  version: ColumnType<number, never, never>;
  /** Set when the person was erased (docs/ERASURE.md): the row is a tombstone from then on. */
  erased_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Keyed digests of the device families the person signed in from, newest first, at most 10 (src/auth/sessions/devices.ts). */
  known_devices: ColumnType<Buffer[] | null, Buffer[] | null | undefined, Buffer[] | null>;
  /** The sealing key the known devices' digests were made under. */
  known_devices_key_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The language the person chose for the messages sent to them; null: not chosen (src/mail/notices.ts personLanguage). */
  language: ColumnType<'en' | 'fr' | null, 'en' | 'fr' | null | undefined, 'en' | 'fr' | null>;
}

export interface RolesTable {
  id: Generated<string>;
  name: string;
  /** uniqueNameKey(name): what role names are unique by and looked up by. */
  name_key: string;
  description: ColumnType<string, string | undefined, string>;
  built_in: ColumnType<boolean, boolean | undefined, boolean>;
  /** Its holders must have a second factor (docs/AUTH.md, "The policy"); always true for the admin role. */
  requires_second_factor: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** See UsersTable.version. Also moved by hand when its permissions change (roles/repository.ts, updateRoleFields). */
  version: ColumnType<number, never, number>;
}

export interface RolePermissionsTable {
  role_id: string;
  permission: string;
}

export interface UserRolesTable {
  user_id: string;
  role_id: string;
}

export interface ApiKeysTable {
  id: Generated<string>;
  name: string;
  /** uniqueNameKey(name): unique among the keys in use. */
  name_key: string;
  permissions: string[];
  display_prefix: string;
  last_characters: string;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  expires_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  revoked_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  last_used_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  last_used_ip: string | null;
  /** See UsersTable.version. */
  version: ColumnType<number, never, never>;
  rate_limit_requests: ColumnType<number | null, number | null | undefined, number | null>;
  rate_limit_per_seconds: ColumnType<number | null, number | null | undefined, number | null>;
  allowed_ips: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  /** A partner's JSON object, returned when the key is read (bounded by src/api-keys/metadata.ts). */
  metadata: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
}

/** A usage-limited key's remaining uses (no row: unlimited), spent and refilled by src/api-keys/uses.ts. */
export interface ApiKeyUsesTable {
  api_key_id: string;
  remaining: number;
  /** The period of the refill, a date_trunc field in UTC; null: never refilled. */
  refill_interval: 'day' | 'month' | null;
  refill_amount: number | null;
  /** When the count was last set (created, changed, refilled): a refill is due once a period starts after it. */
  refilled_at: Date;
  /** Drawn from a sequence at every count set by a person, never by a spend (migration 20270105T1000_api_key_uses_version); a bigint, as text. */
  version: Generated<string>;
}

/** What every process admitted for one limited caller in one window (src/limits/). */
export interface RateLimitCountersTable {
  subject: string;
  window_start: Date;
  window_end: Date;
  count: ColumnType<string, number | string, number | string>;
}

/** A key's requests in one hour, by outcome. */
export interface ApiKeyUsageTable {
  api_key_id: string;
  hour: Date;
  allowed: ColumnType<string, number | undefined, number>;
  rate_limited: ColumnType<string, number | undefined, number>;
  ip_refused: ColumnType<string, number | undefined, number>;
  permission_refused: ColumnType<string, number | undefined, number>;
}

export interface ApiKeySecretsTable {
  digest: Buffer;
  api_key_id: string;
  created_at: Timestamp;
  retires_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface SessionsTable {
  id: Generated<string>;
  user_id: string;
  ip_address: string;
  user_agent: string;
  generation: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  last_used_at: Timestamp;
  refreshed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  expires_at: Timestamp;
  ended_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  revoked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  revoked_reason: ColumnType<string | null, string | null | undefined, string | null>;
  authentication_method: ColumnType<AuthenticationMethod, AuthenticationMethod | undefined, AuthenticationMethod>;
  /** The latest fresh proof for a sensitive change (src/auth/sessions/step-up.ts), and by what. */
  stepped_up_at: Nullable<Date>;
  step_up_method: Nullable<StepUpMethod>;
}

export interface SessionTokensTable {
  id: Generated<string>;
  session_id: string;
  generation: number;
  access_digest: Buffer;
  refresh_digest: Buffer;
  issued_at: Timestamp;
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  successor_sealed: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
}

export interface SignInFailuresTable {
  id: Generated<number>;
  email_digest: Buffer;
  ip_address: string;
  failed_at: Date;
}

export type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>;

/** The journal of security events and changes of rights ("audit events" in the API). */
export interface SecurityEventsTable {
  id: Generated<string>;
  type: string;
  occurred_at: Date;
  /** The person the event concerns (who signed in, whose account or session changed). */
  user_id: Nullable<string>;
  session_id: Nullable<string>;
  ip_address: Nullable<string>;
  user_agent: Nullable<string>;
  details: ColumnType<Record<string, unknown>, string | undefined, string>;
  actor_type: ColumnType<string, string | undefined, string>;
  actor_id: Nullable<string>;
  actor_session_id: Nullable<string>;
  actor_label: Nullable<string>;
  target_type: Nullable<string>;
  target_id: Nullable<string>;
  target_label: Nullable<string>;
  request_id: Nullable<string>;
  changes: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  seal_id: Nullable<string>;
  hash: Nullable<Buffer>;
  /**
   * From event hash version 2 (src/audit/hash.ts): per group of personal columns a random salt and
   * the salted digest the event's hash covers. An erased group keeps its digest, loses its salt.
   */
  who_salt: Nullable<Buffer>;
  who_digest: Nullable<Buffer>;
  where_salt: Nullable<Buffer>;
  where_digest: Nullable<Buffer>;
  what_salt: Nullable<Buffer>;
  what_digest: Nullable<Buffer>;
  /** Set when an erasure scrubbed the event's personal columns (docs/ERASURE.md), and whose erasure it was. */
  erased_at: Nullable<Date>;
  erased_for: Nullable<string>;
}

export interface AuditSealsTable {
  id: ColumnType<string, string | undefined, never>;
  sealed_at: Timestamp;
  event_count: number;
  first_event_id: string;
  last_event_id: string;
  oldest_event_at: Timestamp;
  newest_event_at: Timestamp;
  batch_hash: Buffer;
  previous_hash: Buffer;
  hash: Buffer;
  events_deleted_at: Nullable<Date>;
  /** The formula of its events' hashes (src/audit/hash.ts): 1 before erasure existed, 2 since. */
  event_hash_version: ColumnType<number, number | undefined, never>;
}

/** What a session stepped up with (src/auth/sessions/step-up.ts). */
export type StepUpMethod = 'password' | 'totp' | 'recovery_code' | 'passkey' | 'oidc';

/** How a session was opened: the password alone, or the password and a second factor. */
export type AuthenticationMethod =
  | 'password'
  | 'password_totp'
  | 'password_recovery_code'
  | 'password_passkey'
  | 'passkey'
  | 'oidc'
  | 'oidc_provider_mfa'
  | 'oidc_totp'
  | 'oidc_recovery_code'
  | 'oidc_passkey';

/** An authenticator app (TOTP) or a passkey of a person. */
export interface SecondFactorsTable {
  id: Generated<string>;
  user_id: string;
  kind: 'totp' | 'passkey';
  name: Nullable<string>;
  created_at: Timestamp;
  confirmed_at: Nullable<Date>;
  last_used_at: Nullable<Date>;
  totp_secret_sealed: Nullable<Buffer>;
  /** The sealing key of totp_secret_sealed (src/auth/secrets/sealing-keys.ts); null: the old service secret, re-sealed at start. */
  totp_key_id: Nullable<string>;
  /** int8: read back as a string. */
  totp_last_step: Nullable<string | number>;
  credential_id: Nullable<string>;
  public_key: Nullable<Buffer>;
  sign_count: Nullable<string | number>;
  transports: Nullable<string[]>;
  /** WebAuthn's BE flag at registration (the credential may be synced); never changes. */
  backup_eligible: Nullable<boolean>;
  /** WebAuthn's BS flag as last reported (the credential is backed up now). */
  backup_state: Nullable<boolean>;
}

export interface RecoveryCodesTable {
  user_id: string;
  digest: Buffer;
  /** The sealing key the digest is keyed under; null: a bare SHA-256, keyed at start. */
  key_id: Nullable<string>;
  created_at: Timestamp;
  used_at: Nullable<Date>;
}

export interface SignInChallengesTable {
  id: Generated<string>;
  token_digest: Buffer;
  user_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  failures: ColumnType<number, number | undefined, number>;
  used_at: Nullable<Date>;
  /** The WebAuthn challenge a passkey must sign for this second step; null when the person had none. */
  passkey_challenge: Nullable<string>;
  /** What the person proved before the second factor: their password, or a sign-in at an identity provider. */
  first_factor: ColumnType<'password' | 'oidc', 'password' | 'oidc' | undefined, 'password' | 'oidc'>;
  /** After an identity provider: what its sign-in writes once the second factor is proved (src/auth/identity-providers/sign-in.ts). */
  pending_oidc: ColumnType<unknown, string | null | undefined, string | null>;
  /** After a password: the SHA-256 digest of the password hash verified (passwordDigest); the second step opens a session only while the person's hash has it. */
  password_digest: Nullable<Buffer>;
}

/** A WebAuthn challenge of a registration or a passwordless sign-in: good once, until expires_at. */
/** One wrong authenticator-app code of a person (migration 20261227T1100): the daily cap counts them. */
export interface SecondFactorCodeFailuresTable {
  id: Generated<string>;
  user_id: string;
  failed_at: Timestamp;
}

export interface StepUpRefusalsTable {
  id: Generated<string>;
  session_id: string;
  refused_at: Timestamp;
  throttled: Generated<boolean>;
}

export interface PasskeyChallengesTable {
  challenge: string;
  purpose: 'registration' | 'sign_in' | 'step_up';
  user_id: Nullable<string>;
  /** A step-up's challenge: the session that asked for it (migration 20261227T1000). */
  session_id: Nullable<string>;
  counted_address: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface ServiceSecretsTable {
  name: 'cursor_signing' | 'second_factor_sealing' | 'webhook_sealing';
  secret: Buffer;
  created_at: Date;
}

/** Mail to send (the outbox of messages, src/mail); a link's token is in `body` and `html` only. */
export interface MessagesTable {
  id: Generated<string>;
  recipient: string;
  kind: string;
  language: string;
  subject: string;
  body: string;
  invitation_id: Nullable<string>;
  created_at: Timestamp;
  sent_at: Nullable<Date | string>;
  /** The HTML part (null on messages written before it existed: plain text only). */
  html: Nullable<string>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date | string>;
  /** A sender's lease on the message (src/mail/sender.ts). */
  claim_token: Nullable<string>;
  claimed_until: Nullable<Date | string>;
  /** Given up after the last attempt. */
  failed_at: Nullable<Date | string>;
  last_error: Nullable<string>;
  delivered_via: Nullable<'smtp' | 'dev_mailbox'>;
  password_reset_id: Nullable<string>;
  /** The person it was written for, when it concerns an account (a notice, a reset). */
  user_id: Nullable<string>;
}

/** Answers of creates made with an Idempotency-Key (src/idempotency). */
export interface IdempotencyKeysTable {
  key_digest: Buffer;
  /** HMAC of the request under the sealing key fingerprint_key_id (null: a bare SHA-256 made before, keyed at start). */
  fingerprint: Buffer;
  fingerprint_key_id: Nullable<string>;
  status: number;
  headers: ColumnType<Record<string, string>, string, string>;
  body: string;
  revision: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** Every table; a feature adds its own from its folder's `table.ts` (declaration merging). */
export interface Database {
  users: UsersTable;
  roles: RolesTable;
  role_permissions: RolePermissionsTable;
  user_roles: UserRolesTable;
  api_keys: ApiKeysTable;
  api_key_secrets: ApiKeySecretsTable;
  api_key_uses: ApiKeyUsesTable;
  idempotency_keys: IdempotencyKeysTable;
  rate_limit_counters: RateLimitCountersTable;
  api_key_usage: ApiKeyUsageTable;
  sessions: SessionsTable;
  session_tokens: SessionTokensTable;
  sign_in_failures: SignInFailuresTable;
  security_events: SecurityEventsTable;
  audit_seals: AuditSealsTable;
  service_secrets: ServiceSecretsTable;
  second_factors: SecondFactorsTable;
  recovery_codes: RecoveryCodesTable;
  sign_in_challenges: SignInChallengesTable;
  passkey_challenges: PasskeyChallengesTable;
  second_factor_code_failures: SecondFactorCodeFailuresTable;
  step_up_refusals: StepUpRefusalsTable;
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  event_relay: EventRelayTable;
  identity_providers: IdentityProvidersTable;
  identity_provider_domains: IdentityProviderDomainsTable;
  identity_provider_role_mappings: IdentityProviderRoleMappingsTable;
  identity_links: IdentityLinksTable;
  oidc_sign_in_flows: OidcSignInFlowsTable;
  scim_external_ids: ScimExternalIdsTable;
  messages: MessagesTable;
}

/** A directory's own id of a person, set by SCIM provisioning (src/scim). */
export interface ScimExternalIdsTable {
  user_id: string;
  external_id: string;
  updated_at: Timestamp;
}

/** The outbox of events (src/audit/outbox.ts), in the change's transaction. */
export interface EventsTable {
  id: Generated<string>;
  seq: ColumnType<string, never, never>;
  xid: ColumnType<string, never, never>;
  type: string;
  occurred_at: Date | string;
  audit_event_id: Nullable<string>;
  required_permission: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
}

export interface WebhookEndpointsTable {
  id: Generated<string>;
  url: string;
  description: Nullable<string>;
  event_types: string[];
  key_style: ColumnType<string, string | undefined, string>;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  disabled_reason: Nullable<'failing'>;
  created_by_user_id: Nullable<string>;
  created_by_api_key_id: Nullable<string>;
  secret_sealed: Buffer;
  /** The sealing key of secret_sealed (src/auth/secrets/sealing-keys.ts); null: the old service secret `webhook_sealing`, re-sealed at start. */
  secret_key_id: Nullable<string>;
  previous_secret_sealed: Nullable<Buffer>;
  previous_secret_key_id: Nullable<string>;
  previous_secret_until: Nullable<Date>;
  failing_since: Nullable<Date>;
  /** Bumped by a trigger on every change of the row (docs/SAFE-WRITES.md). */
  version: ColumnType<number, never, never>;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  endpoint_id: string;
  event_id: string;
  status: ColumnType<'pending' | 'succeeded' | 'failed' | 'skipped', 'pending' | undefined, 'pending' | 'succeeded' | 'failed' | 'skipped'>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Nullable<Date>;
  last_attempt_at: Nullable<Date>;
  last_status_code: Nullable<number>;
  last_duration_ms: Nullable<number>;
  last_error: Nullable<string>;
  last_response: Nullable<string>;
  created_at: Date;
}

/** Where the relay of events to webhook deliveries stands (migration 20270101T1000; one row). */
export interface EventRelayTable {
  id: number;
  /** The position, in (xid, seq) order. */
  last_xid: string;
  last_seq: string;
}

/** A company's OpenID Provider (migration 20261223T1000). */
export interface IdentityProvidersTable {
  id: Generated<string>;
  name: string;
  name_key: string;
  issuer: string;
  client_id: string;
  client_secret_sealed: Buffer;
  /** The sealing key of client_secret_sealed (src/auth/identity-providers/client-secret.ts). */
  client_secret_key_id: string;
  scopes: string[];
  groups_claim: string;
  create_unknown_people: boolean;
  sso_required: boolean;
  second_factor_amr: string[];
  second_factor_acr: string[];
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Moved by the service's changes (changedAt): the provider's revision, with its mapped roles' (src/auth/identity-providers/repository.ts). */
  version: ColumnType<number, never, number>;
}

export interface IdentityProviderDomainsTable {
  domain: string;
  provider_id: string;
}

export interface IdentityProviderRoleMappingsTable {
  provider_id: string;
  group_name: string;
  role_id: string;
}

/** A person as known to an issuer: linked once by a verified e-mail, then by subject alone. */
export interface IdentityLinksTable {
  issuer: string;
  subject: string;
  user_id: string;
  provider_id: string;
  created_at: Timestamp;
  last_sign_in_at: Timestamp;
}

/** A sign-in at a provider in progress: single use, short-lived. */
export interface OidcSignInFlowsTable {
  state_digest: Buffer;
  flow_digest: Buffer;
  provider_id: string;
  code_verifier: string;
  nonce: string;
  redirect_uri: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  /** A step-up's flow: the session whose person re-authenticates (null: a sign-in). */
  step_up_session_id: ColumnType<string | null, string | null | undefined, string | null>;
}
