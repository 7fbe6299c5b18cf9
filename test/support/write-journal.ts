// A journal of every committed write to the application tables, kept by triggers installed in a
// test database: after a request, one small query says which tables (and, for an UPDATE, which
// columns) it changed. Cheaper than digesting every table after every request, and exact: a row
// written and rolled back leaves no entry, a row committed always does (TRUNCATE included).
import { sql, type Kysely } from 'kysely';
import { COLUMNS_WRITTEN_WHEN_REFUSED, WRITTEN_WHEN_REFUSED } from './table-digest.js';

export interface JournalEntry {
  id: number;
  table_name: string;
  op: 'INSERT' | 'UPDATE' | 'DELETE' | 'TRUNCATE';
  /** For an UPDATE, the columns whose value changed; null otherwise. */
  columns: string[] | null;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** Creates the journal and a trigger on each of `tables` (every write, whatever the table). */
export async function installWriteJournal(db: AnyDb, tables: string[]): Promise<void> {
  await sql`create table test_write_journal (id bigserial primary key, table_name text not null, op text not null, columns text[])`.execute(db);
  await sql`
    create function test_journal_write() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE' then
        insert into test_write_journal (table_name, op, columns)
        select tg_table_name, tg_op, array(
          select n.key from jsonb_each(to_jsonb(new)) n where n.value is distinct from (to_jsonb(old) -> n.key) order by n.key);
      else
        insert into test_write_journal (table_name, op, columns) values (tg_table_name, tg_op, null);
      end if;
      return null;
    end $$`.execute(db);
  for (const table of tables) {
    await sql`create trigger test_journal_rows after insert or update or delete on ${sql.table(table)} for each row execute function test_journal_write()`.execute(db);
    await sql`create trigger test_journal_truncate after truncate on ${sql.table(table)} for each statement execute function test_journal_write()`.execute(db);
  }
}

/** Entries after `afterId`, oldest first. */
export async function journalSince(db: AnyDb, afterId: number): Promise<JournalEntry[]> {
  const { rows } = await sql<JournalEntry>`select id::int as id, table_name, op, columns from test_write_journal where id > ${afterId} order by id`.execute(db);
  return rows;
}

/**
 * The entries a refused request must not have caused: anything but the tables and columns a refused
 * request writes on purpose (see table-digest.ts), and an UPDATE that changed no value.
 */
export function unexpectedWrites(entries: JournalEntry[]): JournalEntry[] {
  return entries.filter((entry) => {
    if (WRITTEN_WHEN_REFUSED.has(entry.table_name)) return false;
    if (entry.op !== 'UPDATE') return true;
    const allowed = COLUMNS_WRITTEN_WHEN_REFUSED[entry.table_name] ?? [];
    return (entry.columns ?? []).some((column) => !allowed.includes(column));
  });
}
