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

export interface Database {
  users: UsersTable;
  roles: RolesTable;
  role_permissions: RolePermissionsTable;
  user_roles: UserRolesTable;
  api_keys: ApiKeysTable;
  api_key_secrets: ApiKeySecretsTable;
}
