// Creates that a retry cannot double (docs/SAFE-WRITES.md), made at the edge: the handler of an
// operation taking an Idempotency-Key hands the create to `once`, which opens the transaction, has
// the service do its work in it, builds the answer from what was made, and (with a key) stores that
// answer as the transaction's last statement. The work and its answer are committed together or
// not at all, so no crash can leave a creation without its answer (or an answer without its
// creation), and the create pays one statement for it. Services know nothing of keys: a create
// takes the transaction it is given, whoever opened it (this service, SCIM's request, the command
// line).
// A request whose key already has an answer finds out when its own transaction tries to store one:
// that transaction is rolled back, whatever it did, and the stored answer is replayed (the same
// request) or refused (another request under the same key). A retry thus costs what the first
// attempt cost, in a transaction that commits nothing; the first attempt, the common case, pays
// no lookup beforehand.
// Work that is slow or calls outside (a password hashed, an issuer's discovery read) is a create's
// draft, done before the transaction opens, so that no pooled connection waits on it; its failure
// is the create's failure (a live answer under the key decides, as for any other).
//
// The stored fingerprint of a request is keyed (docs/SAFE-WRITES.md): an HMAC, under the sealing key
// (src/auth/secrets/sealing-keys.ts, never in the database), of the request's SHA-256. A body may hold a
// password (POST /users): a bare digest in the table would let whoever reads it test guesses at
// the speed of SHA-256; without the key, the stored value tests nothing.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Dependencies } from '../dependencies.js';
import { DomainError } from '../errors.js';
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

export const REPLAY_HEADER = 'Idempotent-Replayed';

const inProgress = () =>
  new DomainError('conflict', 'idempotency_key_in_progress', 'A request with this Idempotency-Key is still being processed; retry it shortly.', { retry_after: 1 });
const reused = () =>
  new DomainError('unprocessable', 'idempotency_key_reused', 'This Idempotency-Key was used for a different request (another path, body or key style); use a new key for a new request.');

/** The stored answer was found by the store, not by us: our transaction must not commit. */
class AnsweredAlready extends Error {}

const keyDigestOf = (r: IdempotencyRequest) => createHash('sha256').update(`${r.caller}\n${r.operation}\n${r.key}`).digest();

export class IdempotencyService {
  private readonly keys: ReturnType<typeof keyringOf>;

  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>) {
    this.keys = keyringOf(deps.config);
  }

  /**
   * Runs a create once per key: opens its transaction, hands it to `work`, and turns what was made
   * into the answer (`answer`, called once); with a key, stores the answer in that transaction,
   * last, and replays or refuses instead when the key has one already. `kept` is what is stored and
   * replayed when it must differ from the first answer (a secret shown once is never stored).
   */
  once<T, A extends Answer>(
    request: IdempotencyRequest | undefined,
    work: (trx: Kysely<Database>) => Promise<T>,
    answer: (made: T) => A,
    kept?: (first: A) => Answer,
  ): Promise<A> {
    return this.onceDrafted(request, () => undefined, (trx) => work(trx), answer, kept);
  }

  /**
   * As `once`, for a create with work to do before its transaction (a password hashed, an issuer's
   * discovery read, a secret made): `draft` runs first, holding no connection, and what it returns
   * is handed to `work` with the transaction. A draft that fails is a create that fails: with a
   * key, a live answer under it decides, as for a failure in the transaction.
   */
  async onceDrafted<D, T, A extends Answer>(
    request: IdempotencyRequest | undefined,
    draft: () => D | Promise<D>,
    work: (trx: Kysely<Database>, draft: D) => Promise<T>,
    answer: (made: T) => A,
    kept: (first: A) => Answer = (first) => first,
  ): Promise<A> {
    const { db } = this.deps;
    if (!request) {
      const drafted = await draft();
      return answer(await db.transaction().execute((trx) => work(trx, drafted)));
    }
    const keyDigest = keyDigestOf(request);
    try {
      const drafted = await draft();
      return await db.transaction().execute(async (trx) => {
        const first = answer(await work(trx, drafted));
        await this.store(trx, request, keyDigest, kept(first));
        return first;
      });
    } catch (err) {
      if (err instanceof DomainError && err.code === 'idempotency_key_in_progress') throw err;
      // Whatever this attempt ran into (the name it would create taken by the first attempt, a
      // right lost since), a live answer under the key decides.
      return this.answered(request, keyDigest, err);
    }
  }

  /** Stores the answer as the transaction's last statement; throws when the key is held or answered already. */
  private async store(trx: Kysely<Database>, request: IdempotencyRequest, keyDigest: Buffer, stored: Answer): Promise<void> {
    const now = this.deps.clock.now();
    const outcome = await storeAnswer(trx, {
      keyDigest,
      // The advisory lock's name: 64 bits of the key's digest (a collision only makes a request wait for a retry).
      lockId: keyDigest.readBigInt64BE(0),
      fingerprint: this.fingerprintUnder(this.keys.current.id, request.requestDigest)!,
      fingerprintKeyId: this.keys.current.id,
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
  }

  /** After a failed attempt (its transaction rolled back): the live answer under the key, replayed or refused; else the failure. */
  private async answered<A extends Answer>(request: IdempotencyRequest, keyDigest: Buffer, err: unknown): Promise<A> {
    const found = await findAnswer(this.deps.db, keyDigest, this.deps.clock.now()).catch(() => undefined);
    if (!found) throw err instanceof AnsweredAlready ? inProgress() : err;
    const mine = found.fingerprint_key_id === null ? undefined : this.fingerprintUnder(found.fingerprint_key_id, request.requestDigest);
    // Under a key no longer configured, no request can show it is the same one: a new key is needed.
    if (!mine || !timingSafeEqual(mine, found.fingerprint)) throw reused();
    return {
      status: found.status,
      headers: { ...found.headers, [REPLAY_HEADER]: 'true' },
      body: found.body === '' ? undefined : JSON.parse(found.body),
      ...(found.revision === null ? {} : { revision: found.revision }),
    } as Answer as A;
  }

  /** The fingerprint of a request under the key `keyId`; undefined when that key is not configured. */
  private fingerprintUnder(keyId: string, requestDigest: Buffer) {
    const key = this.keys.byId(keyId, 'idempotency-fingerprint');
    return key && keyedDigest(key, requestDigest);
  }
}
