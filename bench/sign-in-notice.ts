// What the notice of a sign-in from a new device costs a sign-in (docs/MAIL.md, "A sign-in from a
// new device or browser"): POST /sessions when every sign-in comes from a browser the person has
// never used (each request another user agent: the sign-in's statement writes the notice, in the
// person's language looked up then) side by side with the same sign-in from the browser the person
// always uses (the statement only moves it to the front of their known devices), on the same
// service process and database. Two people, one per side, with the same password and row shape:
// one person for both would see the known browser pushed out of their 10 by the new ones.
//  1. a throwaway PostgreSQL 15 (or DATABASE_URL); the service in its own process
//     (BENCH_SERVICE_SCRIPT, dist/src/main.js by default, as `npm start` starts it, with SERVICE_ENV:
//     production, MAIL_OUTBOX_ONLY, so the notices stay in the outbox and nothing sends them);
//  2. each person signs in once from their usual browser, which starts their list; both sides are
//     checked (201; a notice for the new browser, none for the known one);
//  3. BENCH_ROUNDS rounds, each measuring both sides for BENCH_DURATION seconds with
//     BENCH_CONNECTIONS clients (wrk, a C program in its own process; the argon2 verification of
//     every sign-in is most of its cost, as in production), in turns (measureInTurn: the order moves
//     from round to round);
//  4. afterwards, the outbox must hold at least one notice per answered sign-in of the new side and
//     none of the known side's person, or the run fails (it would have compared other work).
// The cost of a sign-in: the CPU of the service's process (every thread, the hashing ones too) and
// of PostgreSQL per answered sign-in. Target: a sign-in that writes the notice costs at most 5 %
// more than one that does not, read on the 95 % interval of the rounds' median ratio
// (docs/BENCHMARKS.md, "Reading a verdict"). Prints a markdown table at the end.
//
// Run alone on a quiet machine (docs/BENCHMARKS.md, "Measure alone"):
//   make build && node --import tsx bench/sign-in-notice.ts
// A smoke run of the script itself (seconds, proves nothing about speed):
//   BENCH_ROUNDS=2 BENCH_DURATION=1 BENCH_WARM_UP=1 BENCH_CONNECTIONS=2 node --import tsx bench/sign-in-notice.ts
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createUserWithPassword } from '../src/users/credentials.js';
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess, stopProcess } from './support/process.js';
import { benchDatabase, settleBeforeMeasuring } from './support/database.js';
import {
  describe,
  intervalVerdict,
  loadAverages,
  machineLine,
  markdownTable,
  measure,
  measureInTurn,
  medianInterval,
  medianOf,
  medianWithInterval,
  percent,
  print,
  quietBefore,
  quietness,
  range,
  type Measurement,
  type Target,
} from './support/measure.js';
import { wrk } from './support/wrk.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);
/** At most 5 % more CPU per sign-in with the notice than without. */
const TARGET = 1.05;
const PASSWORD = 'a benchmark password of decent length';
const KNOWN_BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0';

/** The usual browser of both people: the header the known side sends on every request. */
const KNOWN_AGENT = `${KNOWN_BROWSER} Bench/known`;

/**
 * wrk's script of a side: POST /sessions as `email`, from KNOWN_AGENT on every request, or
 * (`newBrowser`) from a user agent no request sent before. A device is the user agent without its
 * digits (src/auth/sessions/devices.ts), so what changes is letters: each wrk thread's own letter
 * (each thread's Lua state counts on its own) and the request's count written in letters, after
 * the same browser's header, so both sides send about the same bytes.
 */
function script(dir: string, email: string, newBrowser: boolean): string {
  const body = JSON.stringify({ session: { email, password: PASSWORD } });
  const file = join(dir, `${newBrowser ? 'new' : 'known'}.lua`);
  writeFileSync(
    file,
    `local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("prefix", string.char(96 + threads))
end
local count = 0
local function letters(n)
  local s = ""
  repeat
    s = string.char(97 + n % 26) .. s
    n = math.floor(n / 26)
  until n == 0
  return s
end
request = function()
  count = count + 1
  local agent = ${newBrowser ? `${JSON.stringify(`${KNOWN_BROWSER} Bench/`)} .. (prefix or "a") .. letters(count)` : JSON.stringify(KNOWN_AGENT)}
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json", ["User-Agent"] = agent }, ${JSON.stringify(body)})
end
`,
  );
  return file;
}

async function main() {
  const database = await benchDatabase('bench_sign_in_notice', { migrate: false });
  const { db } = database;
  let service: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    service = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV });
    const url = `${service.url}/sessions`;
    const stamp = Date.now();
    const person = async (side: string) => {
      const email = `bench-${side}-${stamp}@example.com`;
      return { email, ...(await createUserWithPassword(db, { email, firstName: 'Bench', lastName: side, password: PASSWORD, roles: [] })) };
    };
    const known = await person('known');
    const fresh = await person('fresh');
    const dir = mkdtempSync(join(tmpdir(), 'bench-sign-in-notice-'));
    const scripts = { known: script(dir, known.email, false), fresh: script(dir, fresh.email, true) };
    const notices = async (userId: string) =>
      Number((await sql<{ n: string }>`select count(*) as n from messages where user_id = ${userId} and kind = 'new_device_sign_in'`.execute(db)).rows[0]!.n);
    const signIn = async (email: string, userAgent: string) => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': userAgent }, body: JSON.stringify({ session: { email, password: PASSWORD } }) });
      if (res.status !== 201) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`);
    };

    // Both people's first sign-in, from their usual browser: it starts their list, tells nothing.
    for (const { email } of [known, fresh]) await signIn(email, KNOWN_AGENT);
    // The checks: the known browser again tells nothing, another browser is one notice.
    await signIn(known.email, KNOWN_AGENT);
    await signIn(fresh.email, `${KNOWN_BROWSER} Bench/check`);
    if ((await notices(known.id)) !== 0 || (await notices(fresh.id)) !== 1) throw new Error(`the two sides do not do what they are for: notices ${await notices(known.id)} (known browser) and ${await notices(fresh.id)} (a new one)`);

    const target: Target = { pid: service.child.pid!, postmaster: database.postmaster };
    const run = (label: string, file: string) => (seconds: number) => measure(label, url, target, { connections: CONNECTIONS, seconds, script: file });
    print(machineLine(`wrk -c${CONNECTIONS}; service: ${SERVICE_SCRIPT}, NODE_ENV=production, DB_POOL_MAX=10, MAIL_OUTBOX_ONLY`, { load: true }));
    print(`warming up for ${WARM_UP} s per side`);
    for (const file of [scripts.known, scripts.fresh]) await wrk(url, { connections: CONNECTIONS, seconds: WARM_UP, script: file });
    await settleBeforeMeasuring(database);
    await quietBefore();

    const noticesBefore = { known: await notices(known.id), fresh: await notices(fresh.id) };
    const rounds: { known: Measurement; fresh: Measurement }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const r = await measureInTurn(round, { known: run('sign-in from the known browser', scripts.known), fresh: run('sign-in from a new browser (notice)', scripts.fresh) }, { seconds: DURATION });
      for (const m of [r.known, r.fresh]) {
        if (m.failures > 0) throw new Error(`${m.label}: ${m.failures} answers failed or were not 2xx`);
        print(describe(m));
      }
      print(`  round ${round}: CPU per sign-in, new / known browser ${percent(cost(r.fresh) / cost(r.known))}; sign-ins per second, new / known ${percent(r.fresh.rps / r.known.rps)}`);
      rounds.push(r);
    }

    // Every answered sign-in of the new side wrote its notice (one still in flight when wrk stopped
    // may have written one more); the known side's person has none.
    const answered = rounds.reduce((sum, r) => sum + r.fresh.requests, 0);
    const written = { known: (await notices(known.id)) - noticesBefore.known, fresh: (await notices(fresh.id)) - noticesBefore.fresh };
    if (written.known !== 0 || written.fresh < answered) throw new Error(`notices written: ${written.known} from the known browser (0 expected), ${written.fresh} for ${answered} sign-ins from new browsers`);
    print(`notices written during the rounds: ${written.fresh} for ${answered} answered sign-ins from new browsers, ${written.known} from the known browser`);

    const ratios = rounds.map((r) => cost(r.fresh) / cost(r.known));
    const quiet = quietness(rounds.flatMap((r) => [r.known, r.fresh]));
    print(`\n${quiet.text}`);
    const row = (label: string, pick: (r: (typeof rounds)[number]) => Measurement, ratio: string) => {
      const m = medianOf(rounds.map(pick));
      return [label, range(rounds.map((r) => pick(r).rps), (v) => v.toFixed(1)), m.p50.toFixed(1), m.p99.toFixed(1), m.nodeMs.toFixed(2), m.postgresMs.toFixed(3), ratio];
    };
    print(`\nPOST /sessions, medians over ${ROUNDS} rounds of ${DURATION} s [range], load average at the end ${loadAverages()}:\n`);
    print(
      markdownTable(
        ['POST /sessions', 'sign-ins/s', 'p50 ms', 'p99 ms', 'Node CPU ms/sign-in', 'PostgreSQL CPU ms/sign-in', 'CPU per sign-in, new / known'],
        [
          row('from the known browser', (r) => r.known, '–'),
          row('**from a new browser (the notice written)**', (r) => r.fresh, `**${medianWithInterval(ratios, percent)}**`),
        ],
      ),
    );
    print(`\ntarget: a sign-in with the notice at most ${percent(TARGET)} of one without (CPU per sign-in): ${intervalVerdict(quiet.quiet, medianInterval(ratios), TARGET, false)}`);
  } finally {
    if (service) await stopProcess(service.child);
    await database.stop();
  }
}

/** A sign-in's cost: the CPU of the service's process and of PostgreSQL per answered sign-in, in ms. */
const cost = (m: Measurement) => m.nodeMs + m.postgresMs;

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
