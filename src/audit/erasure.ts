// Erasing a person's personal columns from the audit trail without breaking its seal (the
// formulas: src/audit/hash.ts). Every event that concerns the person (as its user, its actor or
// its target), or that holds their e-mail address in its text (a label, the details or the
// changes: an invitation to them before they had an account), loses its three personal groups at
// once: labels, address and user agent, details and changes. A sealed event also loses its salts
// (its digests stay, and its seal still verifies); an event not sealed yet is simply scrubbed, and
// sealed later as it then is. The other people such an event names by label (an administrator
// acting on the person) lose their label in it too: they are still known by their id.
//
// A name is never searched as text: the labels that show a person's name belong to the event's
// actor or target, found by id, and a name in free text would match a namesake's events or any
// text that happens to hold it (someone named "Back Office", or `":` `"`, matched every event).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { waitForChainLock } from './seal.js';
import { wholeAddressPattern } from '../text/addresses.js';

export interface PersonToErase {
  id: string;
  email: string;
}

/** Erases the personal columns of the person's events, in the erasure's transaction; how many events. */
export async function erasePersonalColumns(trx: Kysely<Database>, person: PersonToErase, at: Date): Promise<number> {
  // No sealer reads an event before this and stamps it after, with a salt of the erased values.
  await waitForChainLock(trx);
  const result = await sql`
    update security_events set
      actor_label = null, target_label = null, ip_address = null, user_agent = null,
      details = '{}'::jsonb, changes = null,
      who_salt = null, where_salt = null, what_salt = null,
      erased_at = ${at}, erased_for = ${person.id}::uuid
    where erased_at is null
      and (user_id = ${person.id}::uuid or actor_id = ${person.id}::uuid or target_id = ${person.id}::uuid
        or concat_ws(' ', actor_label, target_label, details::text, changes::text) ~* ${wholeAddressPattern(person.email)})`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}
