// Company sign-in with OpenID Connect (docs/IDENTITY.md): the identity providers an administrator
// configures (client secret sealed, e-mail domains, groups mapped to roles), the links between a
// provider's subjects and our people (by issuer and subject, never again by e-mail), the sign-in
// flows in progress (state, nonce and PKCE verifier, server-side so that any process may finish
// what another started), what first factor a second-factor challenge follows, and the session
// methods of a sign-in through a provider.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

/** Every way a session may have been opened, this migration's included (it replaces the check of 20261219T1000, passkeys). */
const METHODS = ['password', 'password_totp', 'password_recovery_code', 'password_passkey', 'passkey', 'oidc', 'oidc_provider_mfa', 'oidc_totp', 'oidc_recovery_code', 'oidc_passkey'];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('identity_providers')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull().unique())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    // AES-256-GCM under the sealing key client_secret_key_id (SEALING_KEYS, not the database), the provider's id as additional data.
    .addColumn('client_secret_sealed', 'bytea', (c) => c.notNull())
    .addColumn('client_secret_key_id', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('groups_claim', 'text', (c) => c.notNull())
    .addColumn('create_unknown_people', 'boolean', (c) => c.notNull())
    .addColumn('sso_required', 'boolean', (c) => c.notNull())
    .addColumn('second_factor_amr', sql`text[]`, (c) => c.notNull())
    .addColumn('second_factor_acr', sql`text[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();

  // One provider answers for a domain: the domain is the key, so a second claim of it is refused.
  await db.schema
    .createTable('identity_provider_domains')
    .addColumn('domain', 'text', (c) => c.primaryKey().check(sql`domain = lower(domain)`))
    .addColumn('provider_id', 'uuid', (c) => c.notNull().references('identity_providers.id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('identity_provider_domains_provider_idx').on('identity_provider_domains').column('provider_id').execute();

  // A group of the provider's groups claim grants roles, held by id: renaming a role keeps the mapping, deleting it drops it.
  await db.schema
    .createTable('identity_provider_role_mappings')
    .addColumn('provider_id', 'uuid', (c) => c.notNull().references('identity_providers.id').onDelete('cascade'))
    .addColumn('group_name', 'text', (c) => c.notNull())
    .addColumn('role_id', 'uuid', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('identity_provider_role_mappings_pkey', ['provider_id', 'group_name', 'role_id'])
    .execute();
  await db.schema.createIndex('identity_provider_role_mappings_role_idx').on('identity_provider_role_mappings').column('role_id').execute();

  await db.schema
    .createTable('identity_links')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider_id', 'uuid', (c) => c.references('identity_providers.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_sign_in_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('identity_links_pkey', ['issuer', 'subject'])
    .execute();
  // A person has at most one subject per issuer: a second subject claiming the same e-mail is someone else.
  await db.schema.createIndex('identity_links_user_issuer_key').on('identity_links').columns(['user_id', 'issuer']).unique().execute();

  await db.schema
    .createTable('oidc_sign_in_flows')
    .addColumn('state_digest', 'bytea', (c) => c.primaryKey())
    .addColumn('flow_digest', 'bytea', (c) => c.notNull())
    .addColumn('provider_id', 'uuid', (c) => c.notNull().references('identity_providers.id').onDelete('cascade'))
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oidc_sign_in_flows_expires_idx').on('oidc_sign_in_flows').column('expires_at').execute();

  await db.schema
    .alterTable('sign_in_challenges')
    .addColumn('first_factor', 'text', (c) => c.notNull().defaultTo('password').check(sql`first_factor in ('password', 'oidc')`))
    .execute();

  // Whatever check an earlier migration put on the session's method, this one lists them all.
  await sql`
    do $$ declare c record; begin
      for c in select conname from pg_constraint
        where conrelid = 'sessions'::regclass and contype = 'c' and pg_get_constraintdef(oid) like '%authentication_method%'
      loop execute format('alter table sessions drop constraint %I', c.conname); end loop;
    end $$`.execute(db);
  await sql`alter table sessions add constraint sessions_authentication_method_known check (authentication_method in (${sql.join(METHODS.map((m) => sql.lit(m)))}))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sessions drop constraint sessions_authentication_method_known`.execute(db);
  await sql`delete from sessions where authentication_method like 'oidc%'`.execute(db);
  await sql`alter table sessions add constraint sessions_authentication_method_check
    check (authentication_method in ('password', 'password_totp', 'password_recovery_code', 'password_passkey', 'passkey'))`.execute(db);
  await db.schema.alterTable('sign_in_challenges').dropColumn('first_factor').execute();
  await db.schema.dropTable('oidc_sign_in_flows').execute();
  await db.schema.dropTable('identity_links').execute();
  await db.schema.dropTable('identity_provider_role_mappings').execute();
  await db.schema.dropTable('identity_provider_domains').execute();
  await db.schema.dropTable('identity_providers').execute();
}
