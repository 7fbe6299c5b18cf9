// Named prepared statements for every query, without per-query code: a pg Client that gives each
// parameterised statement text a name derived from the text. The first execution on a connection
// parses and plans it there (PostgreSQL keeps it for the connection's life); later executions send
// only the parameters, so PostgreSQL neither parses nor, once it settles on a generic plan, plans
// again. Measured on the hot paths: docs/BENCHMARKS.md.
//
// Off with DB_PREPARED_STATEMENTS=false, for connection poolers in transaction mode (PgBouncer
// before 1.21): they hand each transaction a server connection of their choice, where a statement
// prepared on another one does not exist.
import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * How many distinct texts a process names; texts seen after that run unnamed, as without this
 * client. Kysely builds a new text for every shape of a dynamic query (filters, list lengths), so
 * this bounds what every connection keeps prepared (plus one per statement a migration made
 * stale, below). The service has well under this many.
 */
export const MAX_NAMED_STATEMENTS = 500;

const names = new Map<string, string>();

function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED_STATEMENTS) {
    // 120 bits of the text's SHA-256: the same text has the same name in every process and
    // connection, and two texts never share one (pg refuses a name reused for another text).
    name = `q${createHash('sha256').update(text).digest('hex').slice(0, 30)}`;
    names.set(text, name);
  }
  return name;
}

/** PostgreSQL refuses to run a prepared statement whose result columns a migration has changed. */
function isStalePlan(err: unknown): boolean {
  return (err as { code?: string; routine?: string }).code === '0A000' && (err as { routine?: string }).routine === 'RevalidateCachedQuery';
}

type Callback = (err: Error | undefined, result: pg.QueryResult) => void;

export class PreparingClient extends pg.Client {
  /** Texts prepared anew under another name on this connection, after their plan went stale. */
  #renamed = new Map<string, string>();

  // query(text, values) and query(text, values, callback), as Kysely and pg's Pool#query call it;
  // everything else (no parameters: transaction control, migrations' multi-statement DDL; config
  // objects) goes to pg unchanged.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: unknown[]): any {
    const [text, values, callback] = args;
    if (typeof text === 'string' && Array.isArray(values) && values.length > 0 && (callback === undefined || typeof callback === 'function')) {
      const name = this.#renamed.get(text) ?? statementName(text);
      if (name !== undefined) {
        if (callback) return this.#run(name, text, values, callback as Callback);
        return new Promise((resolve, reject) => this.#run(name, text, values, (err, result) => (err ? reject(err) : resolve(result))));
      }
    }
    return (super.query as (...a: unknown[]) => unknown)(...args);
  }

  // With a callback, which pg calls as soon as the answer is read (a Pool hands the connection on
  // from there), rather than a promise.
  #run(name: string, text: string, values: unknown[], callback: Callback): void {
    super.query({ name, text, values }, (err: Error | undefined, result: pg.QueryResult) => {
      if (err && isStalePlan(err)) {
        // A migration of a rolling deploy changed the columns this statement returns (`select *`):
        // PostgreSQL will refuse this prepared statement for the connection's life. Prepare the
        // text again under a new name; outside a transaction, run it again now (inside one, the
        // transaction has failed and its caller sees the error; the next use gets the new name).
        const fresh = `${name}_${this.#renamed.size + 1}`;
        this.#renamed.set(text, fresh);
        if (this.getTransactionStatus() === 'I') {
          super.query({ name: fresh, text, values }, callback);
          return;
        }
      }
      callback(err, result);
    });
  }
}
