// Erasing a person's personal columns from the audit trail without breaking its seal (the
// formulas: src/audit/hash.ts). Every event that concerns the person (as its user, its actor or
// its target), or that names them in its text (their e-mail or full name in a label, the details
// or the changes), loses its three personal groups at once: labels, address and user agent,
// details and changes. A sealed event also loses its salts (its digests stay, and its seal still
// verifies); an event not sealed yet is simply scrubbed, and sealed later as it then is. The
// other people such an event names by label (an administrator acting on the person) lose their
// label in it too: they are still known by their id.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { waitForChainLock } from './seal.js';

/** `%text%` for ILIKE, wildcards in the text taken as text. */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export interface PersonToErase {
  id: string;
  /** What names them in text: their e-mail, their full name. */
  texts: readonly string[];
}

/** Erases the personal columns of the person's events, in the erasure's transaction; how many events. */
export async function erasePersonalColumns(trx: Kysely<Database>, person: PersonToErase, at: Date): Promise<number> {
  // No sealer reads an event before this and stamps it after, with a salt of the erased values.
  await waitForChainLock(trx);
  const patterns = person.texts.filter((t) => t.trim().length > 0).map(containing);
  const result = await sql`
    update security_events set
      actor_label = null, target_label = null, ip_address = null, user_agent = null,
      details = '{}'::jsonb, changes = null,
      who_salt = null, where_salt = null, what_salt = null,
      erased_at = ${at}, erased_for = ${person.id}::uuid
    where erased_at is null
      and (user_id = ${person.id}::uuid or actor_id = ${person.id}::uuid or target_id = ${person.id}::uuid
        or concat_ws(' ', actor_label, target_label, details::text, changes::text) ilike any (${patterns}::text[]))`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}
