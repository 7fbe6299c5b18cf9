// Benchmark of the audit trail's seal chain (see docs/BENCHMARKS.md): a throwaway PostgreSQL 15
// (or DATABASE_URL) gets BENCH_EVENTS audit events (100,000 by default: sign-ins, refreshes and
// changes of rights with before/after), then is sealed as the maintenance step does, then verified
// as `backoffice audit verify` does (every seal re-hashed, every event re-read and re-hashed).
// Prints the time of each step; nothing here is a pass/fail threshold.
import { sql } from 'kysely';
import { sealAuditEvents } from '../src/audit/seal.js';
import { verifyAuditTrail } from '../src/audit/verify.js';
import { benchDatabase } from './support/database.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const print = (line: string) => process.stdout.write(`${line}\n`);
const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(2);

async function main() {
  const database = await benchDatabase('bench_audit', { poolMax: 2 });
  const { db } = database;
  try {
    let t = Date.now();
    // One event a few seconds apart over the last days: 60 % sign-ins, 30 % refreshes, 10 % key rotations with before/after.
    await sql`
      insert into security_events (type, occurred_at, user_id, session_id, ip_address, user_agent, details, actor_type, actor_id,
        actor_session_id, actor_label, target_type, target_id, target_label, request_id, changes)
      select
        case when i % 10 < 6 then 'sign_in_succeeded' when i % 10 < 9 then 'tokens_refreshed' else 'api_key_rotated' end,
        now() - make_interval(secs => (${EVENTS} - i) * 3),
        gen_random_uuid(), gen_random_uuid(), '203.0.113.' || (i % 250), 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0',
        case when i % 10 = 9 then '{"grace_period_seconds": 3600}'::jsonb else '{}'::jsonb end,
        'user', gen_random_uuid(), gen_random_uuid(), 'Ada Lovelace',
        case when i % 10 = 9 then 'api_key' else 'session' end, gen_random_uuid(), 'ci-deploy', gen_random_uuid()::text,
        case when i % 10 = 9 then '{"before": {"last_characters": "9fQ2"}, "after": {"last_characters": "Xb7k"}}'::jsonb end
      from generate_series(1, ${EVENTS}) as i`.execute(db);
    await sql`vacuum analyze security_events`.execute(db);
    print(`recorded ${EVENTS} events in ${seconds(t)} s`);

    t = Date.now();
    const sealed = await sealAuditEvents(db, new Date());
    print(`sealed ${sealed.events} events in ${sealed.seals} seals in ${seconds(t)} s`);
    await sql`vacuum analyze security_events`.execute(db);

    for (let round = 1; round <= ROUNDS; round++) {
      t = Date.now();
      const report = await verifyAuditTrail(db, { now: new Date(), retentionS: 400 * 86_400 });
      if (!report.ok) throw new Error(`verify failed: ${report.problem}`);
      print(`round ${round}: verified ${report.seals} seals and ${report.eventsChecked} events in ${seconds(t)} s`);
    }
  } finally {
    await database.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
