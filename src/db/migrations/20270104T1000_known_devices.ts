// The devices and browsers a person signed in from, for the notice of a sign-in from a new one
// (docs/MAIL.md, "A sign-in from a new device"; src/auth/sessions/devices.ts):
// - `users.known_devices`: keyed digests (16 bytes each) of the user agents' families, the most
//   recently used first, at most 10 (the sign-in's statement keeps them so). Columns of users, not a table: the sign-in's one statement
//   already writes the person's row (last_sign_in_at), so remembering the device and deciding
//   whether it is new cost no other row, index or lock.
// - `users.known_devices_key_id`: the id of the sealing key the digests were made under. After a
//   key rotation the list is started again from the next sign-in, silently (a digest under another
//   key cannot be compared).
// Null on both until the person's first sign-in with this feature, and on an erased person's tombstone.
// Typed Kysely<any> so the migration stays frozen in time.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('known_devices', sql`bytea[]`).addColumn('known_devices_key_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('known_devices').dropColumn('known_devices_key_id').execute();
}
