// Roles and their permissions, and which users hold which roles. The built-in `admin` role is
// created here; the code grants it the whole catalogue, so it never needs updating.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('roles')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('built_in', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index roles_name_lower_key on roles (lower(name))`.execute(db);
  await db.schema
    .createTable('role_permissions')
    .addColumn('role_id', 'uuid', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addColumn('permission', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('role_permissions_pkey', ['role_id', 'permission'])
    .execute();
  await db.schema
    .createTable('user_roles')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role_id', 'uuid', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('user_roles_pkey', ['user_id', 'role_id'])
    .execute();
  await db.schema.createIndex('user_roles_role_id_idx').on('user_roles').column('role_id').execute();
  await db
    .insertInto('roles')
    .values({ name: 'admin', description: 'Every permission, now and later. Cannot be deleted or changed.', built_in: true })
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('user_roles').execute();
  await db.schema.dropTable('role_permissions').execute();
  await db.schema.dropTable('roles').execute();
}
