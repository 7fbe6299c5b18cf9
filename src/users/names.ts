// A user's e-mail address and names: how they are cleaned before they are stored (text people
// read, src/text/normalize.ts) and how e-mail addresses are compared.
import { cleanName, uniqueNameKey } from '../text/normalize.js';

/**
 * An e-mail address as the contract reads it (src/contract/formats.ts): an address that comes in
 * otherwise than through POST /users (a directory's SCIM userName, an identity provider's claim)
 * is held to it too, or the person it makes would break every answer that shows them.
 */
export { isEmailAddress } from '../contract/formats.js';

/**
 * What e-mail addresses are unique by and found by (the users_email_key_key index): the address
 * as typed, trimmed, compared as RFC 8265 compares usernames (uniqueNameKey), so `ＡＤＡ@example.com`
 * and `ada@example.com ` name one account. The sign-in throttle counts attempts by it too.
 */
export const emailKey = (email: string) => uniqueNameKey(email.trim());

/** The unique index a second user with the same e-mail violates. */
export const EMAIL_UNIQUE_INDEX = 'users_email_key_key';

/** How a user's e-mail and names are cleaned before they are stored (src/text/normalize.ts); `at`: where they came from. */
export function cleanUserText<T extends { email?: string; first_name?: string; last_name?: string }>(input: T, at = 'request/body'): T {
  const clean = (field: 'email' | 'first_name' | 'last_name', maxLength: number) =>
    input[field] === undefined ? {} : { [field]: cleanName(input[field], { location: `${at}/${field}`, maxLength }) };
  return { ...input, ...clean('email', 254), ...clean('first_name', 100), ...clean('last_name', 100) };
}
