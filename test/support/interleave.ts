// Another request's work slipped in at a chosen moment of a request's, for the race tests
// (test/step-up-passkey.test.ts, test/step-up-throttles.test.ts).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../src/db/schema.js';

/**
 * The database as the service sees it, where the next transaction begun runs `hook()` (then
 * forgotten) first: what another request does between a request's authentication and its work.
 */
function runningBeforeNextTransaction(db: Kysely<Database>, hook: () => (() => Promise<unknown>) | undefined): Kysely<Database> {
  return new Proxy(db, {
    get(target, property) {
      const run = property === 'transaction' ? hook() : undefined;
      if (run) {
        return () => ({
          execute: async <T>(work: (trx: Transaction<Database>) => Promise<T>) => {
            await run();
            return target.transaction().execute(work);
          },
        });
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * The database for the service under test (`db`), and `before(work)`: the next transaction the
 * service begins runs `work` first, once; `ran` is true once it has (or while none is waiting).
 */
export function interleaved(db: Kysely<Database>) {
  let next: (() => Promise<unknown>) | undefined;
  return {
    db: runningBeforeNextTransaction(db, () => {
      const run = next;
      next = undefined;
      return run;
    }),
    before(work: () => Promise<unknown>): void {
      next = work;
    },
    get ran(): boolean {
      return next === undefined;
    },
  };
}
