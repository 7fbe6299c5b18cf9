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

export interface FixedStatement<P, R> {
  /** The SQL text, `$1`, `$2`, ... in it. */
  readonly sql: string;
  /** The values of `$1`, `$2`, ... for these parameters. */
  parameters(values: P): unknown[];
  /** Runs the statement on the database or a transaction (a Transaction is a Kysely); its rows. */
  execute(db: Kysely<Database>, values: P): Promise<R[]>;
}

/**
 * Compiles `build` once. `build` receives placeholders for its parameters (`p.digest`, ...) and
 * must use each only as a value (`where(col, '=', p.x)`, `${p.x}` in sql``), never as a list or
 * an identifier. Constants it uses (`'active'`) stay parameters of their own, fixed.
 */
export function fixedStatement<P extends object, R>(
  build: (db: Kysely<Database>, p: P) => { compile(executorProvider: QueryExecutorProvider): CompiledQuery<R> },
): FixedStatement<P, R> {
  const placeholders = new Proxy({}, { get: (_target, name) => new Placeholder(String(name)) }) as P;
  const compiled = build(compiler, placeholders).compile(compiler);
  const slots = compiled.parameters.map((value) => (value instanceof Placeholder ? value.name : undefined));
  const constants = compiled.parameters;
  const parameters = (values: P) => slots.map((name, i) => (name === undefined ? constants[i] : values[name as keyof P]));
  return {
    sql: compiled.sql,
    parameters,
    async execute(db, values) {
      // The compiled query with this execution's values: Kysely's executor runs it as it is.
      const result = await db.executeQuery<R>({ ...compiled, parameters: parameters(values) });
      return result.rows;
    },
  };
}
