// A link of issuer and subject belongs to the provider it was made through: deleting the provider
// removes its links instead of keeping them with no provider, where any provider sharing the issuer
// (Google) would have found them and given its role mappings. Links left without a provider are
// removed; provider_id is required from now on.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`delete from identity_links where provider_id is null`.execute(db);
  await sql`alter table identity_links drop constraint identity_links_provider_id_fkey`.execute(db);
  await sql`alter table identity_links alter column provider_id set not null,
    add constraint identity_links_provider_id_fkey foreign key (provider_id) references identity_providers (id) on delete cascade`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table identity_links drop constraint identity_links_provider_id_fkey`.execute(db);
  await sql`alter table identity_links alter column provider_id drop not null,
    add constraint identity_links_provider_id_fkey foreign key (provider_id) references identity_providers (id) on delete set null`.execute(db);
}
