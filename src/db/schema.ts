// Table types for Kysely. One interface per table; migrations are the source of the columns.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface UsersTable {
  id: Generated<string>;
  email: string;
  first_name: string;
  last_name: string;
  status: ColumnType<'active' | 'disabled', 'active' | 'disabled' | undefined, 'active' | 'disabled'>;
  password_hash: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  last_sign_in_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The password was set by someone else: the user must choose their own before anything else. */
  must_change_password: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface RolesTable {
  id: Generated<string>;
  name: string;
  description: ColumnType<string, string | undefined, string>;
  built_in: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
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

type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>;

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
}

export interface ServiceSecretsTable {
  name: 'cursor_signing';
  secret: Buffer;
  created_at: Date;
}

export interface Database {
  users: UsersTable;
  roles: RolesTable;
  role_permissions: RolePermissionsTable;
  user_roles: UserRolesTable;
  api_keys: ApiKeysTable;
  api_key_secrets: ApiKeySecretsTable;
  sessions: SessionsTable;
  session_tokens: SessionTokensTable;
  sign_in_failures: SignInFailuresTable;
  security_events: SecurityEventsTable;
  audit_seals: AuditSealsTable;
  service_secrets: ServiceSecretsTable;
}
