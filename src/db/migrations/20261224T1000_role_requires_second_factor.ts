// A role may require a second factor of its holders (docs/AUTH.md, "The policy"): the
// rule that required one of administrators now reads this flag on every role of the person. The
// built-in admin role (the only role `built_in` holds for, migration 20261208T1000) always requires
// one: the database refuses it otherwise.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('roles').addColumn('requires_second_factor', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await sql`update roles set requires_second_factor = true where built_in`.execute(db);
  await sql`alter table roles add constraint roles_admin_requires_second_factor check (requires_second_factor or not built_in)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('roles').dropConstraint('roles_admin_requires_second_factor').execute();
  await db.schema.alterTable('roles').dropColumn('requires_second_factor').execute();
}
