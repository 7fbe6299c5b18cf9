// Whether a person may sign in with a password at all: not when their e-mail's domain belongs to
// an identity provider that requires its people to sign in there (`sso_required`). Read
// here, below the identity domain that manages providers, because the password sign-in asks it.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** The e-mail's domain, lower case ('' for an address without one). */
export const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).trim().toLowerCase();

/** The provider people of this e-mail's domain must sign in with, if it requires that. */
export function ssoRequiredProvider(db: Kysely<Database>, email: string): Promise<{ id: string; name: string } | undefined> {
  return db
    .selectFrom('identity_provider_domains as d')
    .innerJoin('identity_providers as p', 'p.id', 'd.provider_id')
    .select(['p.id', 'p.name'])
    .where('d.domain', '=', domainOf(email))
    .where('p.sso_required', '=', true)
    .executeTakeFirst();
}
