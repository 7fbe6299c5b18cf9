// Erasure of a person and a seal that survives it (docs/ERASURE.md; src/audit/hash.ts the
// formulas).
//
// - users.erased_at: the row is a tombstone from then on (status disabled, no name, an e-mail of
//   the reserved `.invalid` domain, no password).
// - security_events: from event hash version 2 on, an event's hash covers its non-personal columns
//   and one digest per group of personal columns (who: the labels; where: the address and user
//   agent; what: details and changes), each digest salted by a random salt of its own. Erasing a
//   group nulls its columns and its salt and keeps its digest. `erased_at` says that an erasure did
//   it, `erased_for` whose erasure (an event that names the person only in its text, not by its
//   user, actor or target, is vouched for by it); a version-1 event, whose hash covers its
//   personal columns unsalted, is judged by its stored hash once erased.
// - audit_seals.event_hash_version: 1 for every seal written before, whose events keep their
//   formula; the sealer writes 2 from now on.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table users add column erased_at timestamptz`.execute(db);
  await sql`alter table security_events
    add column who_salt bytea, add column who_digest bytea,
    add column where_salt bytea, add column where_digest bytea,
    add column what_salt bytea, add column what_digest bytea,
    add column erased_at timestamptz, add column erased_for uuid`.execute(db);
  await sql`alter table audit_seals add column event_hash_version smallint not null default 1`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table audit_seals drop column event_hash_version`.execute(db);
  await sql`alter table security_events
    drop column who_salt, drop column who_digest, drop column where_salt, drop column where_digest,
    drop column what_salt, drop column what_digest, drop column erased_at, drop column erased_for`.execute(db);
  await sql`alter table users drop column erased_at`.execute(db);
}
