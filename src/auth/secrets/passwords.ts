// Password hashing: argon2id with OWASP's parameters, from @node-rs/argon2 (prebuilt binaries,
// no install script), in a pool of worker threads (piscina), so it never blocks the event loop.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { trace, SpanStatusCode } from '@opentelemetry/api';
import { dictionary } from '@zxcvbn-ts/language-common';
import type { HashJob } from './password-hash-worker.js';

export const ARGON2_PARAMETERS = {
  algorithm: 2, // Algorithm.Argon2id (a const enum, which isolated modules cannot read)
  memoryCost: 19_456, // KiB
  timeCost: 2,
  parallelism: 1,
} as const;

// Two more hashing threads than cores: a thread that has just finished waits for its next job,
// and the spare ones keep every core busy meanwhile (with one thread per core, sign-in throughput
// was lower: bench/sign-in.ts). They run at a lower priority (nice +10, through piscina and @napi-rs/nice):
// the event loop and PostgreSQL, at normal priority, get a core first, so a sign-in flood does
// not delay other requests. Jobs beyond the threads wait in order in piscina's queue; at most
// HASH_THREADS x 19 MiB of memory is in use for hashing.
export const HASH_THREADS = availableParallelism() + 2;
export const HASH_THREAD_NICE = 10;

// Threads of this process's pool: HASH_THREADS, or its share when several processes of the
// service run on the host (WORKERS: shareHashingAmong), so that N processes do not start N times
// cores + 2 threads (and N times their memory).
let threads = HASH_THREADS;

/** One of `processes` processes of the service on this host: a share of the cores, plus 2. Before the first hash. */
export function shareHashingAmong(processes: number): void {
  threads = Math.ceil(availableParallelism() / processes) + 2;
}

// From src/ (tests, tsx) the worker is TypeScript and needs tsx's loader; from dist/ it is JavaScript.
const workerUrl = new URL(`./password-hash-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

let pool: Piscina<HashJob, string | boolean> | undefined;
/** Started on first use: command-line tools that never hash start no threads. */
function hashingPool(): Piscina<HashJob, string | boolean> {
  pool ??= new Piscina({
    filename: workerUrl.href,
    execArgv: workerUrl.pathname.endsWith('.ts') ? ['--import', 'tsx'] : [],
    minThreads: threads,
    maxThreads: threads,
    niceIncrement: HASH_THREAD_NICE,
    recordTiming: false, // piscina's run and wait histograms: nobody reads them
  });
  return pool;
}

/** The hashing pool now, for metrics: threads, busy ones, jobs waiting, jobs done (all 0 before its first job). */
export function hashingPoolState() {
  if (!pool) return { threads: 0, busy: 0, queued: 0, completed: 0 };
  const threads = pool.threads.length;
  return { threads, busy: threads - pool.idleThreads, queued: pool.queueSize, completed: pool.completed };
}

// With tracing on (src/tracing), each hash or verification is a span of the request that asked
// for it, from the wait for a thread to the answer; off, the API's tracer is a no-op.
const tracer = trace.getTracer('backoffice-api');

/** The job on the pool, inside a span named after it. */
function runTraced(name: string, job: HashJob): Promise<string | boolean> {
  return tracer.startActiveSpan(name, async (span) => {
    try {
      return await hashingPool().run(job);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

export async function hashPassword(password: string): Promise<string> {
  return (await runTraced('argon2id hash', { op: 'hash', password, options: ARGON2_PARAMETERS })) as string;
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return (await runTraced('argon2id verify', { op: 'verify', hash: passwordHash, password })) === true;
  } catch {
    return false; // a malformed stored hash never signs anyone in
  }
}

/** True when the stored hash was made with other parameters and should be replaced at sign-in. */
export function needsRehash(passwordHash: string): boolean {
  const { memoryCost: m, timeCost: t, parallelism: p } = ARGON2_PARAMETERS;
  return !passwordHash.startsWith(`$argon2id$v=19$m=${m},t=${t},p=${p}$`);
}

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 128;

// The common-password list maintained by zxcvbn-ts (about 49,000 leaked passwords, most used first).
const COMMON_PASSWORDS: ReadonlySet<string> = new Set((dictionary['passwords-common'] as string[]).map((p) => p.toLowerCase()));

/** True when the password (ignoring letter case) is on the common-password list. */
export function isCommonPassword(password: string): boolean {
  return COMMON_PASSWORDS.has(password.toLowerCase());
}

/**
 * The password policy: 12 to 128 characters counted in code points, no composition rules, not a
 * commonly used password. Returns the reason it fails, or null.
 */
export function passwordPolicyViolation(password: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `The password must have at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (length > PASSWORD_MAX_LENGTH) return `The password must have at most ${PASSWORD_MAX_LENGTH} characters.`;
  if (isCommonPassword(password)) return 'This password is too common; choose another.';
  return null;
}
