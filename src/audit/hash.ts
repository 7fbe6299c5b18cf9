// The hashes of the seal chain. A batch's hash covers its events' hashes in id order; a seal's hash
// covers the previous seal's hash, the batch hash and the seal's own facts. Sealing and verifying
// read events through the same query and hash them with the same functions, so they cannot
// disagree on the bytes.
//
// An event's hash has two formulas, named by its seal's `event_hash_version`:
//  1. (seals written before erasure existed) every recorded column, personal ones included, as
//     they are: erasing a personal column of such an event changes its hash.
//  2. the non-personal columns and, for each group of personal columns (PERSONAL_GROUPS), the
//     digest sha256(salt || canonical(group's columns)) under a random salt of the group's own.
//     The sealer stores each salt and digest beside the event. Erasing a group nulls its columns
//     and its salt and keeps its digest: the event still hashes to its sealed value, and the kept
//     digest, its salt gone, is 32 random-looking bytes that no guess of the erased values can be
//     tested against. Any other change of a group whose salt is kept changes its digest.
import { createHash, randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { EVENT_COLUMNS, type AuditEventRow } from './repository.js';
import { isoMicros } from '../db/iso-time.js';

/** The hash before the first seal. */
export const GENESIS = Buffer.alloc(32);

/** The formula the sealer uses for the seals it writes now. */
export const CURRENT_EVENT_HASH_VERSION = 2;

/** The personal columns of an event, by group: each group is erased whole, under a salt of its own. */
export const PERSONAL_GROUPS = {
  /** Who acted and on whom, by name (an e-mail, a person's name, a key's name). */
  who: ['actor_label', 'target_label'],
  /** Where from: the client's address and user agent (also erased alone, by the sign-in address retention). */
  where: ['ip_address', 'user_agent'],
  /** What was said of the change: details and before/after. */
  what: ['details', 'changes'],
} as const;

export type PersonalGroup = keyof typeof PERSONAL_GROUPS;
export const GROUP_NAMES = Object.keys(PERSONAL_GROUPS) as PersonalGroup[];

/** An event as the sealer and the verifier read it: its columns, its salts and digests, its hash. */
export type HashedEventRow = AuditEventRow & {
  who_salt: Buffer | null;
  who_digest: Buffer | null;
  where_salt: Buffer | null;
  where_digest: Buffer | null;
  what_salt: Buffer | null;
  what_digest: Buffer | null;
  erased_at: string | null;
  erased_for: string | null;
};

/** Events as hashed, in id order. */
export function selectEventsToHash(db: Kysely<Database>) {
  return db
    .selectFrom('security_events')
    .select([...EVENT_COLUMNS, 'session_id', 'hash', 'who_salt', 'who_digest', 'where_salt', 'where_digest', 'what_salt', 'what_digest', 'erased_for'])
    .select(isoMicros('occurred_at').as('occurred_at'))
    .select(sql<string | null>`${isoMicros('erased_at')}`.as('erased_at'))
    .orderBy('id');
}

/** JSON with object keys sorted at every level: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Version 1: every recorded column, personal ones as they are. */
export function eventHashV1(e: HashedEventRow): Buffer {
  // Ids as text: the service's pg parses int8 to numbers (src/db/database.ts), a bare pg client to strings.
  const fields = [
    String(e.id),
    e.type,
    e.occurred_at,
    e.user_id,
    e.session_id,
    e.actor_type,
    e.actor_id,
    e.actor_session_id,
    e.actor_label,
    e.target_type,
    e.target_id,
    e.target_label,
    e.ip_address,
    e.user_agent,
    e.request_id,
    e.details,
    e.changes,
  ];
  return createHash('sha256').update(canonicalJson(fields)).digest();
}

/** The columns of one personal group, in a fixed order. */
export const groupValues = (e: HashedEventRow, group: PersonalGroup): unknown[] => PERSONAL_GROUPS[group].map((column) => e[column]);

/** sha256(salt || canonical(the group's columns)). */
export function groupDigest(salt: Buffer, values: readonly unknown[]): Buffer {
  return createHash('sha256').update(salt).update(canonicalJson(values)).digest();
}

export const newSalt = () => randomBytes(16);

export type GroupDigests = Record<PersonalGroup, Buffer>;

/** Version 2: the non-personal columns and the three group digests. */
export function eventHashV2(e: HashedEventRow, digests: GroupDigests): Buffer {
  const fields = [
    'v2',
    String(e.id),
    e.type,
    e.occurred_at,
    e.user_id,
    e.session_id,
    e.actor_type,
    e.actor_id,
    e.actor_session_id,
    e.target_type,
    e.target_id,
    e.request_id,
    digests.who.toString('hex'),
    digests.where.toString('hex'),
    digests.what.toString('hex'),
  ];
  return createHash('sha256').update(canonicalJson(fields)).digest();
}

export function batchHash(eventHashes: readonly Buffer[]): Buffer {
  const hash = createHash('sha256');
  for (const h of eventHashes) hash.update(h);
  return hash.digest();
}

export interface SealFacts {
  id: string;
  sealed_at: string;
  event_count: number;
  first_event_id: string;
  last_event_id: string;
  oldest_event_at: string;
  newest_event_at: string;
  batch_hash: Buffer;
  previous_hash: Buffer;
  event_hash_version: number;
}

export function sealHash(s: SealFacts): Buffer {
  const known = [String(s.id), s.sealed_at, s.event_count, String(s.first_event_id), String(s.last_event_id), s.oldest_event_at, s.newest_event_at];
  // Version 1's facts are what they were; from version 2 the version is one of the facts, so a
  // seal cannot be passed off as written under the other formula.
  const facts = canonicalJson(s.event_hash_version === 1 ? known : [...known, s.event_hash_version]);
  return createHash('sha256').update(s.previous_hash).update(s.batch_hash).update(facts).digest();
}

/** Seals with their times printed to the microsecond, in chain order. */
export function selectSeals(db: Kysely<Database>) {
  return db
    .selectFrom('audit_seals')
    .select(['id', 'event_count', 'first_event_id', 'last_event_id', 'batch_hash', 'previous_hash', 'hash', 'event_hash_version'])
    .select([isoMicros('sealed_at').as('sealed_at'), isoMicros('oldest_event_at').as('oldest_event_at'), isoMicros('newest_event_at').as('newest_event_at')])
    .select(sql<string | null>`${isoMicros('events_deleted_at')}`.as('events_deleted_at'))
    .orderBy('id');
}
