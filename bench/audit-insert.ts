// What recording costs on the hot path (see docs/BENCHMARKS.md): sign-in and refresh write one
// event each, as before the audit trail; the event row now has more columns and more indexes.
// This times that insert alone, one statement at a time from one connection, into the table as it
// was (migrations before the audit trail) and as it is, in alternating rounds so that both see the
// same background load. Uses DATABASE_URL when set, else a throwaway PostgreSQL 15.
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import { benchDatabase } from './support/database.js';

const INSERTS = Number(process.env.BENCH_INSERTS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const print = (line: string) => process.stdout.write(`${line}\n`);

async function main() {
  const database = await benchDatabase('bench_audit_insert', { poolMax: 1 });
  const { db } = database;
  try {
    // The table before the audit trail: its columns and its two indexes.
    await sql`
      create table events_before (id bigserial primary key, type text not null, occurred_at timestamptz not null,
        user_id uuid, session_id uuid, ip_address text not null, user_agent text not null, details jsonb not null default '{}'::jsonb);
      create index events_before_user_idx on events_before (user_id, occurred_at)`.execute(db);
    const userId = (await sql<{ id: string }>`insert into users (email, email_key, first_name, last_name) values ('bench@example.com', 'bench@example.com', 'Ada', 'Lovelace') returning id`.execute(db)).rows[0]!.id;
    const ua = 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0';

    const before = async () => {
      await sql`insert into events_before (type, occurred_at, user_id, session_id, ip_address, user_agent)
        values ('sign_in_succeeded', now(), ${userId}, ${randomUUID()}, '203.0.113.7', ${ua})`.execute(db);
    };
    // As the sign-in statement writes it now: actor and target with the user's name looked up.
    const after = async () => {
      const session = randomUUID();
      await sql`insert into security_events (type, occurred_at, user_id, session_id, ip_address, user_agent,
          actor_type, actor_id, actor_label, target_type, target_id, target_label, request_id)
        select 'sign_in_succeeded', now(), ${userId}, ${session}, '203.0.113.7', ${ua}, 'user', ${userId}, n.name, 'session', ${session}, n.name, ${randomUUID()}
        from (select first_name || ' ' || last_name as name from users where id = ${userId}) n`.execute(db);
    };
    const time = async (insert: () => Promise<void>) => {
      const started = process.hrtime.bigint();
      for (let i = 0; i < INSERTS; i++) await insert();
      return Number(process.hrtime.bigint() - started) / 1e6 / INSERTS;
    };
    await time(before);
    await time(after); // warm-up
    const results: { before: number; after: number }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const b = await time(before);
      const a = await time(after);
      results.push({ before: b, after: a });
      print(`round ${round}: ${INSERTS} inserts each: before ${b.toFixed(3)} ms, after ${a.toFixed(3)} ms per event (+${(a - b).toFixed(3)} ms)`);
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    print(`median: before ${median(results.map((r) => r.before)).toFixed(3)} ms, after ${median(results.map((r) => r.after)).toFixed(3)} ms per event`);
  } finally {
    await database.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
