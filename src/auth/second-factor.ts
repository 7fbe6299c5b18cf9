// Whether a person has a second factor in force: one fact, asked inside the statements that sign in
// (src/throttle) and authenticate (src/sessions), so that knowing it costs no round trip.
import { sql } from 'kysely';

/**
 * The SQL condition "the user in `userIdColumn` has a confirmed second factor" (an authenticator
 * app past its first code, or a passkey): one probe of second_factors_confirmed_idx.
 */
export const hasSecondFactor = (userIdColumn: string) =>
  sql<boolean>`exists (select 1 from second_factors f where f.user_id = ${sql.ref(userIdColumn)} and f.confirmed_at is not null)`;
