// A SCIM request acts on its key's rights as they are when it writes, not as they were read at
// authentication: between the two, an administrator may have narrowed the key, taken a role from
// its creator or disabled them (a request parked on a person's lock can wait a long time). One home
// for that re-read, used by SCIM Users and Groups alike.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { permissionDenied } from '../errors.js';
import type { Authority } from '../auth/authority.js';
import { lockRolesOfUser } from '../roles/repository.js';
import { creatorOfKey, keyPermissionsNow } from '../api-keys/repository.js';
import { lockUsers } from './repository.js';

/** The permission of every SCIM operation; it also stands for `users.disable` in a directory's (de)provisioning. */
export const PROVISIONING_PERMISSION = 'scim.provision';

/**
 * Locks the people a request changes (FOR UPDATE) with the key's creator (FOR SHARE), in id order,
 * then the creator's roles (FOR SHARE), and only then reads the key's effective permissions again
 * (keyPermissionsNow): what the creator holds cannot change until the transaction ends, and a
 * narrowing committed while the request waited on any of these locks is seen. Refused as
 * authentication would refuse the key now (403 permission_denied) when it no longer holds
 * scim.provision (a disabled creator leaves it none). Returns the people found (an unknown id is
 * not) and the authority to act with from here on; an operator's authority is kept as it is.
 */
export async function lockWithStandingNow(trx: Kysely<Database>, authority: Authority, people: readonly string[]): Promise<{ found: Set<string>; authority: Authority }> {
  const creator = authority.kind === 'api_key' ? await creatorOfKey(trx, authority.apiKeyId) : null;
  const found = await lockUsers(trx, people, creator);
  if (authority.kind !== 'api_key') return { found, authority };
  if (creator) await lockRolesOfUser(trx, creator);
  const now: Authority = { ...authority, permissions: new Set(await keyPermissionsNow(trx, authority.apiKeyId)) };
  if (!now.permissions.has(PROVISIONING_PERMISSION)) throw permissionDenied(PROVISIONING_PERMISSION);
  return { found, authority: now };
}
