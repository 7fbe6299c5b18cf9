// Creates that a retry cannot double (docs/SAFE-WRITES.md). A create made with an Idempotency-Key
// stores its answer in its own transaction, as the last statement before COMMIT: the work and the
// answer are committed together or not at all, so no crash can leave a creation without its
// answer (or an answer without its creation), and the create pays one statement for it.
// A request whose key already has an answer finds out when its own transaction tries to store one:
// that transaction is rolled back, whatever it did, and the stored answer is replayed (the same
// request) or refused (another request under the same key). A retry thus costs what the first
// attempt cost, in a transaction that commits nothing; the first attempt, the common case, pays
// no lookup beforehand.
//
// The stored fingerprint of a request is keyed (docs/SAFE-WRITES.md): an HMAC, under the sealing key
// (src/auth/secrets/sealing-keys.ts, never in the database), of the request's SHA-256. A body may hold a
// password (POST /users): a bare digest in the table would let whoever reads it test guesses at
// the speed of SHA-256; without the key, the stored value tests nothing.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Dependencies } from '../dependencies.js';
import { DomainError, internal } from '../errors.js';
import { keyedDigest, keyringOf } from '../auth/secrets/sealing-keys.js';
import { findAnswer, storeAnswer } from './repository.js';

/** How long an answer is kept and replayed (Stripe's and the IETF draft's usual 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** The Idempotency-Key of one request, with what makes it this caller's and this request. */
export interface IdempotencyRequest {
  /** Who asks: `user:<id>` or `api_key:<id>`. Another caller's key value is another key. */
  caller: string;
  /** The operationId: one key may serve two different operations. */
  operation: string;
  key: string;
  /** SHA-256 of the request as received (method, path, key style, body bytes): what "the same request" means. Never stored as it is. */
  requestDigest: Buffer;
}

/** What a handler answers, as far as storing it goes. */
export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** The revision the answer's ETag names. */
  revision?: string;
}

/** Run by a service last in the transaction of a create, with what it made. */
export type Seal<T> = (trx: Kysely<Database>, made: T) => Promise<void>;

/**
 * The last step of every create's transaction: with an Idempotency-Key (`seal` given), reads the
 * new resource as it is shown, on the create's transaction, and stores the answer with it; returns
 * what it read. Without a key it reads nothing (undefined): the service reads the resource after
 * COMMIT. Services write `sealed = await sealCreated(trx, seal, () => findShown(trx, id))`.
 */
export async function sealCreated<T>(trx: Kysely<Database>, seal: Seal<T> | undefined, read: () => Promise<T | undefined>): Promise<T | undefined> {
  if (!seal) return undefined;
  const made = await read();
  if (made === undefined) throw internal('A resource created in this transaction cannot be read in it.');
  await seal(trx, made);
  return made;
}

export const REPLAY_HEADER = 'Idempotent-Replayed';

const inProgress = () =>
  new DomainError('conflict', 'idempotency_key_in_progress', 'A request with this Idempotency-Key is still being processed; retry it shortly.', { retry_after: 1 });
const reused = () =>
  new DomainError('unprocessable', 'idempotency_key_reused', 'This Idempotency-Key was used for a different request (another path, body or key style); use a new key for a new request.');

/** The stored answer was found by the store, not by us: our transaction must not commit. */
class AnsweredAlready extends Error {}

const keyDigestOf = (r: IdempotencyRequest) => createHash('sha256').update(`${r.caller}\n${r.operation}\n${r.key}`).digest();

export function idempotencyService({ db, clock, config }: Pick<Dependencies, 'db' | 'clock' | 'config'>) {
  const keys = keyringOf(config);
  /** The fingerprint of a request under the key `keyId`; undefined when that key is not configured. */
  const fingerprintUnder = (keyId: string, requestDigest: Buffer) => {
    const key = keys.byId(keyId, 'idempotency-fingerprint');
    return key && keyedDigest(key, requestDigest);
  };
  return {
    /**
     * Runs a create once per key: `work` does it, handing `seal` (when there is a key) to the
     * service, which calls it last in its transaction; `answer` turns what was made into the
     * answer. `kept` is what is stored and replayed when it must differ from the first answer (a
     * secret shown once is never stored).
     */
    async once<T, A extends Answer>(
      request: IdempotencyRequest | undefined,
      work: (seal: Seal<T> | undefined) => Promise<T>,
      answer: (made: T) => A,
      kept: (first: A) => Answer = (first) => first,
    ): Promise<A> {
      if (!request) return answer(await work(undefined));
      const keyDigest = keyDigestOf(request);
      let first: A | undefined;
      try {
        await work(async (trx, made) => {
          first = answer(made);
          const stored = kept(first);
          const now = clock.now();
          const outcome = await storeAnswer(trx, {
            keyDigest,
            // The advisory lock's name: 64 bits of the key's digest (a collision only makes a request wait for a retry).
            lockId: keyDigest.readBigInt64BE(0),
            fingerprint: fingerprintUnder(keys.current.id, request.requestDigest)!,
            fingerprintKeyId: keys.current.id,
            answer: {
              status: stored.status,
              headers: stored.headers ?? {},
              body: stored.body === undefined ? '' : JSON.stringify(stored.body),
              revision: stored.revision ?? null,
            },
            now,
            expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
          });
          if (outcome === 'in_progress') throw inProgress();
          if (outcome === 'taken') throw new AnsweredAlready();
        });
        return first!;
      } catch (err) {
        if (err instanceof DomainError && err.code === 'idempotency_key_in_progress') throw err;
        // Whatever this attempt ran into (the name it would create taken by the first attempt, a
        // right lost since), a live answer under the key decides.
        const found = await findAnswer(db, keyDigest, clock.now()).catch(() => undefined);
        if (!found) throw err instanceof AnsweredAlready ? inProgress() : err;
        const mine = found.fingerprint_key_id === null ? undefined : fingerprintUnder(found.fingerprint_key_id, request.requestDigest);
        // Under a key no longer configured, no request can show it is the same one: a new key is needed.
        if (!mine || !timingSafeEqual(mine, found.fingerprint)) throw reused();
        return {
          status: found.status,
          headers: { ...found.headers, [REPLAY_HEADER]: 'true' },
          body: found.body === '' ? undefined : JSON.parse(found.body),
          ...(found.revision === null ? {} : { revision: found.revision }),
        } as Answer as A;
      }
    },
  };
}
