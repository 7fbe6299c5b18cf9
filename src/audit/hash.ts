// The hashes of the seal chain. An event's hash covers every recorded column (not its seal_id or
// hash); a batch's hash covers its events' hashes in id order; a seal's hash covers the previous
// seal's hash, the batch hash and the seal's own facts. Sealing and verifying read events through
// the same query and hash them with the same functions, so they cannot disagree on the bytes.
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { EVENT_COLUMNS, type AuditEventRow } from './repository.js';
import { isoMicros } from '../db/iso-time.js';

/** The hash before the first seal. */
export const GENESIS = Buffer.alloc(32);


/** What is hashed of an event: every column but the seal's id. */
export type HashedEventRow = AuditEventRow;

/** Events as hashed, in id order. */
export function selectEventsToHash(db: Kysely<Database>) {
  return db
    .selectFrom('security_events')
    .select([...EVENT_COLUMNS, 'session_id', 'hash'])
    .select(isoMicros('occurred_at').as('occurred_at'))
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

export function eventHash(e: HashedEventRow): Buffer {
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
}

export function sealHash(s: SealFacts): Buffer {
  const facts = canonicalJson([String(s.id), s.sealed_at, s.event_count, String(s.first_event_id), String(s.last_event_id), s.oldest_event_at, s.newest_event_at]);
  return createHash('sha256').update(s.previous_hash).update(s.batch_hash).update(facts).digest();
}

/** Seals with their times printed to the microsecond, in chain order. */
export function selectSeals(db: Kysely<Database>) {
  return db
    .selectFrom('audit_seals')
    .select(['id', 'event_count', 'first_event_id', 'last_event_id', 'batch_hash', 'previous_hash', 'hash'])
    .select([isoMicros('sealed_at').as('sealed_at'), isoMicros('oldest_event_at').as('oldest_event_at'), isoMicros('newest_event_at').as('newest_event_at')])
    .select(sql<string | null>`${isoMicros('events_deleted_at')}`.as('events_deleted_at'))
    .orderBy('id');
}
