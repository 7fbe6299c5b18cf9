// What reading a page of rows costs in Node, the way pg makes row objects against the way a fixed
// statement does (src/db/fixed-statement.ts): pg's Result makes every row of every statement with
// one spread (`{ ...prebuilt }`), which V8 keeps fast only while it has seen at most four shapes;
// a service runs many statements, so it has seen more. A fixed statement reads pg's answer in array
// mode and makes its rows with a function of its own, which sees one shape.
// Each case runs in a process of its own (V8's state at that spot cannot be reset), in turn, over
// rounds: a page of 50 rows of 10 text columns (GET /users' page), read 20,000 times after a warm-up.
//   objects, one shape:      pg's row objects, as a process that only ever runs this statement
//   objects, many shapes:    the same after 12 other statements' rows (a service)
//   array mode, many shapes: readRows of a fixed statement, after the same 12 other statements'
//                            rows in both modes (their own readRows too)
// Usage: node --import tsx bench/row-shapes.ts   (BENCH_ROUNDS, default 5)
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { fixedStatement } from '../src/db/fixed-statement.js';
import { median, print } from './support/measure.js';

/** pg's Result (pg/lib/result.js, undeclared in @types/pg), as far as this reads it. */
interface PgResult {
  rows: unknown[];
  addFields(fields: { name: string; dataTypeID: number; format: string }[]): void;
  parseRow(values: unknown[]): unknown;
  addRow(row: unknown): void;
}
const Result = createRequire(import.meta.url)('pg/lib/result') as new (rowMode: 'array' | undefined, types: undefined) => PgResult;

const CASES = ['objects, one shape', 'objects, many shapes', 'array mode, many shapes'] as const;
type Case = (typeof CASES)[number];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PAGES = 20_000;
const TEXT = 25; // pg-types' OID of text: its parser returns the string as it is

const fieldsOf = (names: string[]) => names.map((name) => ({ name, dataTypeID: TEXT, format: 'text' }));
const page = fieldsOf(['id', 'email', 'first_name', 'last_name', 'status', 'created_at', 'updated_at', 'last_sign_in_at', 'cursor_created_at', 'roles']);
const values = page.map((_field, i) => `value of column ${i}`);

// Any fixed statement: readRows makes its row function from the answer's own column names.
const anyStatement = () => fixedStatement((_db, p: { n: number }) => sql<Record<string, string>>`select ${p.n}::int as n`);
const statement = anyStatement();

/** Rows of 12 other shapes, through pg's object spread and through 12 other fixed statements, as a service's other statements leave both. */
function seeOtherShapes() {
  for (let shape = 0; shape < 12; shape++) {
    const fields = fieldsOf(Array.from({ length: 3 + shape }, (_v, i) => `column_${shape}_${i}`));
    const objects = new Result(undefined, undefined);
    objects.addFields(fields);
    const arrays = new Result('array', undefined);
    arrays.addFields(fields);
    for (let row = 0; row < 10; row++) {
      objects.parseRow(fields.map(() => 'x'));
      arrays.addRow(arrays.parseRow(fields.map(() => 'x')));
    }
    anyStatement().readRows({ rows: arrays.rows as unknown[][], fields });
  }
}

function readPages(kind: Case, pages: number): number {
  let rows = 0;
  for (let n = 0; n < pages; n++) {
    if (kind === 'array mode, many shapes') {
      const result = new Result('array', undefined);
      result.addFields(page);
      for (let row = 0; row < 50; row++) result.addRow(result.parseRow(values));
      rows += statement.readRows({ rows: result.rows as unknown as unknown[][], fields: page }).length;
    } else {
      const result = new Result(undefined, undefined);
      result.addFields(page);
      for (let row = 0; row < 50; row++) result.addRow(result.parseRow(values));
      rows += result.rows.length;
    }
  }
  return rows;
}

/** In a child process: one case, µs per page on standard output. */
function runCase(kind: Case) {
  if (kind !== 'objects, one shape') seeOtherShapes();
  readPages(kind, 2_000);
  const start = process.hrtime.bigint();
  readPages(kind, PAGES);
  process.stdout.write(String(Number(process.hrtime.bigint() - start) / 1000 / PAGES));
}

const child = process.env.ROW_SHAPES_CASE as Case | undefined;
if (child) {
  runCase(child);
} else {
  const script = fileURLToPath(import.meta.url);
  const times = new Map<Case, number[]>(CASES.map((kind) => [kind, []]));
  print(`a page of 50 rows of 10 text columns read ${PAGES} times, each case in a process of its own, ${ROUNDS} rounds in turn`);
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of round % 2 === 0 ? CASES : [...CASES].reverse()) {
      const run = spawnSync(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, ROW_SHAPES_CASE: kind }, encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`${kind}: ${run.stderr}`);
      times.get(kind)!.push(Number(run.stdout));
    }
  }
  const objectsMany = median(times.get('objects, many shapes')!);
  print('\n| case | µs per page, median [range] | against pg\'s objects after many shapes |\n| --- | --- | --- |');
  for (const kind of CASES) {
    const t = times.get(kind)!;
    print(`| ${kind} | ${median(t).toFixed(1)} [${Math.min(...t).toFixed(1)}–${Math.max(...t).toFixed(1)}] | ${((median(t) / objectsMany) * 100).toFixed(0)} % |`);
  }
}
