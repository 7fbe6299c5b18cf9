// The rule "no request holds a database connection while asking for another" (README.md,
// "Architecture"), enforced in every test file (vitest.config.ts `setupFiles`). The embedded
// database of `make run` has exactly one connection: code that holds it (a transaction, or Kysely's
// `db.connection()`) and then asks the pool for another waits for itself and answers 503; on a real
// pool it deadlocks under load. A test on a pool of twenty never notices, so the check does not
// depend on the pool's size: while a Kysely consumer holds a connection, its async context is
// marked, and the pool's `connect` (every query, every transaction goes through it) asked from a
// marked context is a breach. The breach is recorded with the stack of the asking call, the query
// still runs (the test goes on as it would have), and the test fails after it ends with that
// stack. Queries that merely run side by side (Promise.all of two reads on `db`) are not a breach:
// neither holds a connection while waiting for the other.
import { AsyncLocalStorage } from 'node:async_hooks';
import { DefaultConnectionProvider, type DatabaseConnection } from 'kysely';
import { afterEach } from 'vitest';

interface Holding {
  released: boolean;
}

const holding = new AsyncLocalStorage<Holding>();
const breaches: string[] = [];

type Consumer<T> = (connection: DatabaseConnection) => Promise<T>;
const provide = DefaultConnectionProvider.prototype.provideConnection;
DefaultConnectionProvider.prototype.provideConnection = function <T>(this: DefaultConnectionProvider, consumer: Consumer<T>): Promise<T> {
  return provide.call(this, (connection: DatabaseConnection) => {
    const hold: Holding = { released: false };
    // A promise started inside and still running afterwards no longer holds anything.
    return holding.run(hold, () => consumer(connection)).finally(() => (hold.released = true));
  }) as Promise<T>;
};

// test/tracing.test.ts instruments pg, which must be loaded after its instrumentation: importing
// pg here first would hide every statement from its traces, so that file's pool is not watched.
const testFile = (globalThis as { __vitest_worker__?: { filepath?: string } }).__vitest_worker__?.filepath ?? '';
if (!testFile.endsWith('tracing.test.ts')) {
  const { default: pg } = await import('pg');
  const connect = pg.Pool.prototype.connect;
  pg.Pool.prototype.connect = function (this: InstanceType<typeof pg.Pool>, ...args: unknown[]) {
    const hold = holding.getStore();
    if (hold && !hold.released) breaches.push(whereFrom());
    return (connect as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pg.Pool.prototype.connect;
}

/** The project's frames of the asking call (async ones included), without the library's. */
function whereFrom(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 60;
  const stack = new Error('asked the pool for a second connection while holding one (use the transaction it runs in)').stack ?? '';
  Error.stackTraceLimit = limit;
  return stack
    .split('\n')
    .filter((line, i) => i === 0 || (!line.includes('node_modules') && !line.includes('one-connection.ts') && !line.includes('node:internal')))
    .join('\n');
}

/**
 * Runs `work` as another client of the database would, outside any connection held here: a test
 * that plays a second process racing a transaction it holds open (never a request's own path).
 */
export function asAnotherClient<T>(work: () => T): T {
  return holding.exit(work);
}

/** The breaches recorded since the last call, forgotten (the rule's own test provokes one). */
export function takeBreaches(): string[] {
  return breaches.splice(0);
}

afterEach(() => {
  const found = takeBreaches();
  if (found.length > 0) {
    throw new Error(`${found.length} time(s) a database connection was asked for by code holding one (README.md, "One connection per request", under Architecture):\n${found.join('\n---\n')}`);
  }
});
