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

export interface SecurityEventsTable {
  id: Generated<number>;
  type: string;
  occurred_at: Date;
  user_id: string | null;
  session_id: string | null;
  ip_address: string;
  user_agent: string;
  details: ColumnType<Record<string, unknown>, string | undefined, string>;
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
}
