// Statements of the hot paths (key and session lookups, the page of users, refresh) are built
// with Kysely once, when their module loads, and then only executed with their parameters: no
// query building per request, and the very same text each time, which the prepared-statement
// client (src/db/prepared-statements.ts) turns into one named statement per connection. The text
// is also what bench/ runs in its floor apps, so the benchmark and the service cannot drift apart.
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type QueryExecutorProvider,
} from 'kysely';
import type { Database } from './schema.js';

/** Stands for a parameter while the statement is built; replaced by the value on every execution. */
class Placeholder {
  constructor(readonly name: string) {}
}

// Kysely's documented way to compile without a database: a dialect with a driver that never connects.
const compiler = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** pg's answer in array mode (`rowMode: 'array'`): each row its values, in the columns' order. */
export interface ArrayResult {
  rows: unknown[][];
  fields: readonly { name: string }[];
}

/** A pg Pool, as far as a fixed statement needs one: take a connection, run, hand it on. */
export interface StatementPool {
  query(config: { text: string; values: unknown[]; rowMode: 'array' }): Promise<ArrayResult>;
}

const pools = new WeakMap<Kysely<Database>, StatementPool>();

/**
 * Fixed statements run on `db` outside a transaction go to its pool directly (Pool#query, whose
 * connection is handed on from the callback that reads the answer), not through Kysely's
 * acquire-await-release. Measured on GET /users (bench/profile.ts, PROFILE_KIND=survivors): through
 * Kysely, the page's rows outlived a young-generation collection about ten times as often (the
 * floor, on Pool#query, saw the same when changed to acquire-await-release), and garbage collection
 * was the largest cost the service had over the floor. In a transaction they run through Kysely, on
 * the transaction's connection.
 */
export function runFixedStatementsOnPool(db: Kysely<Database>, pool: StatementPool): void {
  pools.set(db, pool);
}

export interface FixedStatement<P, R> {
  /** The SQL text, `$1`, `$2`, ... in it. */
  readonly sql: string;
  /** The values of `$1`, `$2`, ... for these parameters. */
  parameters(values: P): unknown[];
  /** Runs the statement on the database or a transaction (a Transaction is a Kysely); its rows. */
  execute(db: Kysely<Database>, values: P): Promise<R[]>;
  /** Its rows as objects (what pg's default row mode makes), from its answer in array mode. */
  readRows(result: ArrayResult): R[];
}

const POSTGRES_EPOCH_MS = Date.UTC(2000, 0, 1);

/**
 * A Date as PostgreSQL's binary timestamptz (microseconds since 2000-01-01 UTC, 8 bytes big-endian):
 * pg sends a Buffer in binary format, which PostgreSQL reads without parsing text. Parsing a text
 * timestamp cost the bearer statement PostgreSQL's CPU for each parameter on every request
 * (bench/statements.ts). The same instant to the millisecond, whatever the time zones.
 */
export function binaryTimestamp(date: Date): Buffer {
  const buffer = Buffer.allocUnsafe(8);
  buffer.writeBigInt64BE(BigInt(date.getTime() - POSTGRES_EPOCH_MS) * 1000n);
  return buffer;
}

interface RowMaker {
  names: string[];
  make: (values: unknown[]) => unknown;
}

/** A column's name as a row maker writes it into its code, as it is: a plain identifier. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A function that makes one statement's row objects from pg's arrays: `{ id: v[0], email: v[1] }`.
 * pg's own row objects are all made by one spread, shared by every statement of the process: in a
 * service of many statements that spot sees more shapes than V8 keeps fast (megamorphic). A
 * function of the statement's own sees one shape. A page of 50 rows of 10 columns is read fastest
 * through this, slower through pg's objects of one shape, slowest after 12 other shapes
 * (bench/row-shapes.ts, docs/BENCHMARKS.md). The same keys in the same order as pg's objects; a
 * later duplicate wins, as in pg's. `__proto__` would set the prototype instead, and anything but
 * a plain name would need quoting: a fixed statement's columns are named by us, so those are
 * refused.
 */
function makeRowMaker(names: string[]): RowMaker {
  const refused = names.find((name) => !PLAIN_NAME.test(name) || name === '__proto__');
  if (refused !== undefined) throw new Error(`a fixed statement's column needs a plain name (a column's own, or an alias), not ${JSON.stringify(refused)}`);
  // Code written from the plain names checked above, nothing else.
  const make = new Function('v', `return { ${names.map((name, i) => `${name}: v[${i}]`).join(', ')} };`) as RowMaker['make'];
  return { names, make };
}

/** Whether an answer's columns are still the ones a row maker was made for (a migration may change `select *`). */
function namesAre(names: string[], fields: readonly { name: string }[]): boolean {
  if (names.length !== fields.length) return false;
  for (let i = 0; i < names.length; i++) if (names[i] !== fields[i]!.name) return false;
  return true;
}

/**
 * Compiles `build` once. `build` receives placeholders for its parameters (`p.digest`, ...) and
 * must use each only as a value (`where(col, '=', p.x)`, `${p.x}` in sql``), never as a list or
 * an identifier. Constants it uses (`'active'`) stay parameters of their own, fixed. A Date
 * parameter is sent as a binary timestamptz (binaryTimestamp), so it must stand where PostgreSQL
 * expects a timestamptz (a column or function argument of that type, or `::timestamptz`). Every
 * column it returns needs a plain name (a column's own, or `as an_alias`): on the pool its rows are
 * made from those names, and a statement with another (`?column?`, `"a b"`) fails there on every run.
 */
export function fixedStatement<P extends object, R>(
  build: (db: Kysely<Database>, p: P) => { compile(executorProvider: QueryExecutorProvider): CompiledQuery<R> },
): FixedStatement<P, R> {
  const placeholders = new Proxy({}, { get: (_target, name) => new Placeholder(String(name)) }) as P;
  const compiled = build(compiler, placeholders).compile(compiler);
  const slots = compiled.parameters.map((value) => (value instanceof Placeholder ? value.name : undefined));
  const constants = compiled.parameters;
  const parameters = (values: P) =>
    slots.map((name, i) => {
      const value = name === undefined ? constants[i] : values[name as keyof P];
      return value instanceof Date ? binaryTimestamp(value) : value;
    });
  let rowMaker: RowMaker | undefined;
  const readRows = (result: ArrayResult): R[] => {
    if (!rowMaker || !namesAre(rowMaker.names, result.fields)) rowMaker = makeRowMaker(result.fields.map((field) => field.name));
    return result.rows.map(rowMaker.make) as R[];
  };
  return {
    sql: compiled.sql,
    parameters,
    readRows,
    async execute(db, values) {
      const pool = pools.get(db); // never a Transaction's: those are made per transaction
      if (pool) return readRows(await pool.query({ text: compiled.sql, values: parameters(values), rowMode: 'array' }));
      // The compiled query with this execution's values: Kysely's executor runs it as it is.
      const result = await db.executeQuery<R>({ ...compiled, parameters: parameters(values) });
      return result.rows;
    },
  };
}

/**
 * The fixed statements of one query whose shape varies (a list's cursor and filters: which
 * clauses it has, never their values), each compiled the first time its shape is asked for and
 * kept, keyed by the shape's JSON. The one statement cache of the keyset pages (users, tasks,
 * meetings); a shape names only booleans and enums, so there are few.
 */
export function fixedStatementsByShape<S extends object, P extends object, R>(
  build: (shape: S) => (db: Kysely<Database>, p: P) => { compile(executorProvider: QueryExecutorProvider): CompiledQuery<R> },
): (shape: S) => FixedStatement<P, R> {
  const statements = new Map<string, FixedStatement<P, R>>();
  return (shape) => {
    const key = JSON.stringify(shape);
    let statement = statements.get(key);
    if (!statement) {
      statement = fixedStatement(build(shape));
      statements.set(key, statement);
    }
    return statement;
  };
}
