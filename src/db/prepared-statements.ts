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

/** A statement as this client names it: a fixed statement's config adds `rowMode: 'array'`. */
interface StatementConfig {
  text: string;
  values: unknown[];
  rowMode?: 'array';
}

/** The keys a config object may have for this client to name it. */
const NAMEABLE_KEYS = new Set(['text', 'values', 'rowMode']);

/**
 * The statement of a call this client names, and its callback: a parameterised text, given as a
 * string (`query(text, values, callback?)`, as Kysely and pg's Pool#query call it) or as a config
 * object of text, values and row mode only (`query(config, callback?)`; Pool#query passes
 * `undefined` values between). Anything else (no parameters: transaction control, migrations'
 * multi-statement DDL; a Submittable such as a cursor; a config with a name or other options) goes
 * to pg unchanged.
 */
function nameable(args: unknown[]): { config: StatementConfig; callback: Callback | undefined } | undefined {
  const [first, second, third] = args;
  let config: StatementConfig;
  let callback: unknown;
  if (typeof first === 'string') {
    config = { text: first, values: second as unknown[] };
    callback = third;
  } else {
    if (typeof first !== 'object' || first === null || typeof (first as { submit?: unknown }).submit === 'function') return undefined;
    for (const key in first) if (!NAMEABLE_KEYS.has(key)) return undefined;
    config = first as StatementConfig;
    if (typeof config.text !== 'string') return undefined;
    callback = second === undefined ? third : second;
  }
  if (!Array.isArray(config.values) || config.values.length === 0 || (callback !== undefined && typeof callback !== 'function')) return undefined;
  return { config, callback: callback as Callback | undefined };
}

/** The statement under its name, as pg takes it. */
const named = (name: string, config: StatementConfig) => ({ name, text: config.text, values: config.values, rowMode: config.rowMode }) as pg.QueryConfig;

export class PreparingClient extends pg.Client {
  /** Texts prepared anew under another name on this connection, after their plan went stale. */
  #renamed = new Map<string, string>();

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: unknown[]): any {
    const call = nameable(args);
    const name = call && (this.#renamed.get(call.config.text) ?? statementName(call.config.text));
    if (call === undefined || name === undefined) return (super.query as (...a: unknown[]) => unknown)(...args);
    const { config, callback } = call;
    if (callback) return this.#run(name, config, callback);
    return new Promise((resolve, reject) => this.#run(name, config, (err, result) => (err ? reject(err) : resolve(result))));
  }

  // With a callback, which pg calls as soon as the answer is read (a Pool hands the connection on
  // from there), rather than a promise.
  #run(name: string, config: StatementConfig, callback: Callback): void {
    super.query(named(name, config), (err: Error | undefined, result: pg.QueryResult) => {
      if (err && isStalePlan(err)) {
        // A migration of a rolling deploy changed the columns this statement returns (`select *`):
        // PostgreSQL will refuse this prepared statement for the connection's life. Prepare the
        // text again under a new name; outside a transaction, run it again now (inside one, the
        // transaction has failed and its caller sees the error; the next use gets the new name).
        const fresh = `${name}_${this.#renamed.size + 1}`;
        this.#renamed.set(config.text, fresh);
        if (this.getTransactionStatus() === 'I') {
          super.query(named(fresh, config), callback);
          return;
        }
      }
      callback(err, result);
    });
  }
}
