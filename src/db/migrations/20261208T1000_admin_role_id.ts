// The built-in admin role gets a fixed, well-known id, and it is the only role that can be built
// in: `built_in` holds exactly for that id. "Holds the admin role" is then one probe of
// user_roles' primary key by (user_id, role_id), with no read of roles, on every bearer request
// (its cost: docs/BENCHMARKS.md, "The bearer statement, part by part"), and it no longer depends
// on the role's name: renaming the role in the database changes nothing.
// The code's copy of the id is ADMIN_ROLE_ID (src/auth/permissions.ts); a migration keeps its own,
// as it must not change with the code. The role's references follow the new id (on update
// cascade); audit events written before keep the id the role had then (the trail is sealed).
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

const ADMIN_ROLE_ID = '00000000-0000-4000-8000-000000000001';

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['user_roles', 'role_permissions']) {
    const constraint = sql.id(`${table}_role_id_fkey`);
    await sql`alter table ${sql.table(table)} drop constraint ${constraint},
      add constraint ${constraint} foreign key (role_id) references roles (id) on delete cascade on update cascade`.execute(db);
  }
  await sql`update roles set id = ${ADMIN_ROLE_ID} where built_in and name = 'admin'`.execute(db);
  // A built-in role renamed in the database was no longer the admin role (the code knew it by
  // name): it granted its own permissions only, and becomes an ordinary role, so that nobody
  // gains every right at the migration and the constraint below holds (it failed the migration).
  await sql`update roles set built_in = false where built_in and id <> ${ADMIN_ROLE_ID}`.execute(db);
  await sql`alter table roles add constraint roles_built_in_is_admin check (built_in = (id = ${sql.lit(ADMIN_ROLE_ID)}))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table roles drop constraint roles_built_in_is_admin`.execute(db);
  for (const table of ['user_roles', 'role_permissions']) {
    const constraint = sql.id(`${table}_role_id_fkey`);
    await sql`alter table ${sql.table(table)} drop constraint ${constraint},
      add constraint ${constraint} foreign key (role_id) references roles (id) on delete cascade`.execute(db);
  }
}
