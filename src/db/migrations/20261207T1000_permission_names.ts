// A role's permission is a name of the catalogue (`users.list`): the service checks that before
// writing one, and the database now refuses anything else too. In particular `*`, which the bearer
// lookup uses to stand for the admin role's "every permission" (src/auth/sessions/repository.ts): no
// row can hold it, so no role but the admin role can grant everything.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table role_permissions add constraint role_permissions_permission_name check (permission ~ '^[a-z][a-z_]*(\\.[a-z][a-z_]*)+$')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table role_permissions drop constraint role_permissions_permission_name`.execute(db);
}
