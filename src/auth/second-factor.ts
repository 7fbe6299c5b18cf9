// Whether a person has a second factor in force: one fact, asked inside the statements that sign in
// (src/auth/throttle) and authenticate (src/auth/sessions), so that knowing it costs no round trip.
import { sql, type RawBuilder } from 'kysely';

/**
 * The SQL condition "the user in `userIdColumn` has a confirmed second factor" (an authenticator
 * app past its first code, or a passkey): one probe of second_factors_confirmed_idx.
 */
export const hasSecondFactor = (userIdColumn: string) =>
  sql<boolean>`exists (select 1 from second_factors f where f.user_id = ${sql.ref(userIdColumn)} and f.confirmed_at is not null)`;

/**
 * The SQL condition "a role of the user requires a second factor" (`roles.requires_second_factor`,
 * read on every role the user holds; docs/AUTH.md, "The policy"). The built-in admin role always
 * carries the flag, and counts only when `adminRequired` (ADMIN_SECOND_FACTOR=required, a
 * parameter of the statement). `userId` is a column name, or an expression giving the id.
 */
export const rolesRequireSecondFactor = (userId: string | RawBuilder<unknown>, adminRequired: boolean) =>
  sql<boolean>`exists (select 1 from user_roles rr join roles r on r.id = rr.role_id
    where rr.user_id = ${typeof userId === 'string' ? sql.ref(userId) : userId} and r.requires_second_factor and (${adminRequired}::boolean or not r.built_in))`;
