// API keys verified from memory (docs/PARTNER-KEYS.md, "Keys in memory"). Each process keeps, by
// secret digest, the row the key statement answers (repository.ts, keyBySecretDigest: the key's
// permissions as bounded by its creator's rights now, expiry, rate limit, allowlist, the creator's
// status, a previous secret's end of grace), and asks the database only on a miss.
//
// In step: triggers send a notification on the channel `api_key_changes` at the commit of every
// statement that can change a key's answer (migration 20270102T1100_api_key_changes); one
// dedicated connection per process, outside the pool, LISTENs and drops what each names.
//
// Fail-safe: the cache is used only while that connection listens. Before LISTEN has succeeded,
// and from the moment the connection reports an error or its end, every request is verified by
// the database (as without a cache), the entries are forgotten, and the connection is made again
// with backoff; entries are kept again only when loaded after the new LISTEN. A load that began
// before a notification (or before LISTEN) is used for its own request but not kept: its row may
// predate a change whose notification this process has already handled. A heartbeat (a
// notification sent through the pool that must come back on the listening connection, first
// before the cache is used, then every 2 s) catches a connection gone silent without an error, a
// listener held back, and a pooler in transaction mode, where LISTEN cannot work.
//
// Bounded: at most `size` keys (least recently used leave), and at most `size` digests remembered
// as unknown, in a set of their own (a flood of unknown keys only cycles that set: it can push no
// key out, and a repeated unknown key costs no second query). A secret added (a key created or
// rotated) forgets the unknown set. Concurrent misses of one digest share one query.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import { API_KEY_CHANGES_CHANNEL } from '../db/channels.js';
import { findKeyBySecretDigest, keysUsedSince, type KeyBySecret } from './repository.js';

export interface KeyCacheOptions {
  /** Keys kept at most (and digests remembered as unknown at most); 0: no cache. */
  size: number;
  /** How often a notification is sent through the pool to prove that this process hears them (ms). */
  heartbeatMs?: number;
  /** How long that notification may take to be heard before the process counts itself deaf (ms). */
  pingTimeoutMs?: number;
  /** The first wait before connecting again (ms), doubled after each failed attempt. */
  reconnectMs?: number;
  /** The longest wait between two connection attempts (ms). */
  maxBackoffMs?: number;
}

export interface KeyCacheState {
  /** Whether answers come from memory now (LISTEN has succeeded on a connection still up). */
  inStep: boolean;
  keys: number;
  unknown: number;
  /** The listening connection's backend process id, when it is up. */
  listenerPid: number | null;
  /** Notifications handled since the process started (tests: what was answered after one). */
  notifications: number;
}

export interface KeyCache {
  /** The key whose secret has this digest, from memory when in step, else from the database; undefined: no such secret. */
  find(digest: Buffer): Promise<KeyBySecret | undefined>;
  /** Listens on PostgreSQL (never on the embedded database: it serves one connection). */
  start(listenUrl: string): void;
  stop(): Promise<void>;
  state(): KeyCacheState;
  /** Whether the key of this digest is in memory now (tests: that an answer came from memory). */
  holds(digest: Buffer): boolean;
  /** Moves with every notification heard and every change of listening state; null while not in step (uses.ts: a lease of uses is good while it is unchanged). */
  epoch(): number | null;
  /** Resolves once the cache is in step (tests; a timeout rejects). */
  inStep(timeoutMs?: number): Promise<void>;
  /** True once in step; false when a connection attempt fails first or `timeoutMs` passes (a start does not wait on a listener that cannot work). */
  settled(timeoutMs: number): Promise<boolean>;
  /**
   * Once in step, loads the keys used since `since` (most recent first, up to the cache's size):
   * how many were kept. Nothing is kept when a notification overtakes the load (its rows may
   * predate the change): those keys load on demand instead.
   */
  preload(since: Date, now: Date): Promise<number>;
}

/** How far back a starting process looks for the keys to load before it answers. */
export const PRELOAD_SINCE_MS = 24 * 3_600_000;

/** A Map kept in order of use: the first entry is the least recently used. */
class Lru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(
    private readonly max: number,
    private readonly onEvict: (key: K, value: V) => void = () => {},
  ) {}
  get size() {
    return this.map.size;
  }
  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }
  has(key: K): boolean {
    return this.map.has(key);
  }
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.max) {
      const [oldest, old] = this.map.entries().next().value as [K, V];
      this.map.delete(oldest);
      this.onEvict(oldest, old);
    }
  }
  delete(key: K): void {
    const value = this.map.get(key);
    if (value === undefined) return;
    this.map.delete(key);
    this.onEvict(key, value);
  }
  clear(): void {
    this.map.clear();
  }
}

/** What a cached key is found by besides its digest: its id (a key has two secrets during a rotation's grace) and its creator. */
class Index {
  private readonly sets = new Map<string, Set<string>>();
  add(by: string, digest: string) {
    let set = this.sets.get(by);
    if (!set) this.sets.set(by, (set = new Set()));
    set.add(digest);
  }
  remove(by: string, digest: string) {
    const set = this.sets.get(by);
    if (!set) return;
    set.delete(digest);
    if (set.size === 0) this.sets.delete(by);
  }
  take(by: string): string[] {
    const set = this.sets.get(by);
    return set ? [...set] : [];
  }
  clear() {
    this.sets.clear();
  }
}

/** A heartbeat's payload: `ping:<random>`, sent by each process for itself, ignored by the others. */
const PING = 'ping:';

export function keyCache(deps: { db: Kysely<Database>; logger: Logger }, options: KeyCacheOptions): KeyCache {
  const { db, logger } = deps;
  const heartbeatMs = options.heartbeatMs ?? 2_000;
  const pingTimeoutMs = options.pingTimeoutMs ?? 5_000;
  const reconnectMs = options.reconnectMs ?? 100;
  const maxBackoffMs = Math.max(options.maxBackoffMs ?? 5_000, reconnectMs);
  const byKey = new Index();
  const byCreator = new Index();
  const keys = new Lru<string, KeyBySecret>(options.size, (digest, row) => {
    byKey.remove(row.id, digest);
    if (row.created_by) byCreator.remove(row.created_by, digest);
  });
  const unknown = new Lru<string, true>(options.size);
  /** Loads in flight, shared by the requests asking for the same digest meanwhile. */
  let inflight = new Map<string, Promise<KeyBySecret | undefined>>();
  /** Moved by every notification and every change of listening state: a load that saw it move is not kept. */
  let epoch = 0;
  let inStep = false;
  let running = false;
  let listener: pg.Client | undefined;
  let listenerPid: number | null = null;
  let notifications = 0;
  /** Connection attempts that failed in a row. */
  let failedAttempts = 0;
  let loop: Promise<void> | undefined;
  let inStepWaiters: (() => void)[] = [];
  /** Waiting for the next outcome of a connection attempt: in step (true) or failed (false). */
  let attemptWaiters: ((inStep: boolean) => void)[] = [];
  const settle = (outcome: boolean) => {
    const waiters = attemptWaiters;
    attemptWaiters = [];
    waiters.forEach((w) => w(outcome));
  };
  let stopWaiting: (() => void) | undefined;

  function forgetAll() {
    keys.clear();
    byKey.clear();
    byCreator.clear();
    unknown.clear();
    inflight = new Map();
    epoch++;
  }

  function drop(digests: string[]) {
    for (const digest of digests) keys.delete(digest);
  }

  function onNotification(payload: string | undefined) {
    // Whatever it names, a load in flight may predate it: not kept, and not shared with later requests.
    epoch++;
    notifications++;
    inflight = new Map();
    if (payload === undefined || payload === 'all') {
      forgetAll();
    } else if (payload === 'n') {
      unknown.clear();
    } else if (payload.startsWith('k:')) {
      drop(byKey.take(payload.slice(2)));
    } else if (payload.startsWith('u:')) {
      drop(byCreator.take(payload.slice(2)));
    } else {
      forgetAll(); // not ours to read: the safe answer
    }
  }

  function keep(hex: string, row: KeyBySecret) {
    keys.set(hex, row);
    byKey.add(row.id, hex);
    if (row.created_by) byCreator.add(row.created_by, hex);
  }

  async function preload(since: Date, now: Date): Promise<number> {
    if (!inStep) return 0;
    const started = epoch;
    const rows = await keysUsedSince(db, since, now, options.size);
    if (!inStep || epoch !== started) return 0;
    // Oldest first, so that the most recently used end up the most recently kept.
    for (let i = rows.length - 1; i >= 0; i--) {
      const { digest, ...row } = rows[i]!;
      keep(digest.toString('hex'), row);
    }
    return rows.length;
  }

  async function load(digest: Buffer, hex: string): Promise<KeyBySecret | undefined> {
    const started = epoch;
    const row = await findKeyBySecretDigest(db, digest);
    if (inStep && epoch === started) {
      if (row) {
        keep(hex, row);
      } else {
        unknown.set(hex, true);
      }
    }
    return row;
  }

  async function find(digest: Buffer): Promise<KeyBySecret | undefined> {
    if (!inStep) return findKeyBySecretDigest(db, digest);
    const hex = digest.toString('hex');
    const cached = keys.get(hex);
    if (cached) return cached;
    if (unknown.get(hex)) return undefined;
    const pending = inflight.get(hex);
    if (pending) return pending;
    const loading = load(digest, hex);
    const shared = inflight;
    shared.set(hex, loading);
    try {
      return await loading;
    } finally {
      if (shared.get(hex) === loading) shared.delete(hex);
    }
  }

  function deaf(reason: string, err?: unknown) {
    if (inStep && running) logger.warn({ err: err ? { message: (err as Error).message } : undefined }, `API key cache: ${reason}; verifying keys against the database until listening again`);
    inStep = false;
    listenerPid = null;
    forgetAll();
  }

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        stopWaiting = undefined;
        resolve();
      }, ms);
      stopWaiting = () => {
        clearTimeout(timer);
        stopWaiting = undefined;
        resolve();
      };
    });

  /**
   * One connection's life: connect, LISTEN, prove that a notification sent by another connection
   * (a pooled one, as every change is) comes back, and only then answer from memory; then the
   * same proof every `heartbeatMs` until it fails, the connection errs or it ends.
   */
  async function listenOnce(url: string): Promise<boolean> {
    const client = new pg.Client({ connectionString: url, application_name: 'backoffice-api-keys', keepAlive: true });
    let lost: (reason: string, err?: unknown) => void = () => {};
    const gone = new Promise<void>((resolve) => {
      lost = (reason, err) => {
        deaf(reason, err);
        resolve();
      };
    });
    /** The ping this connection waits for. */
    let awaited: { payload: string; heard: () => void } | undefined;
    client.on('notification', (message) => {
      if (message.channel !== API_KEY_CHANGES_CHANNEL) return;
      if (message.payload?.startsWith(PING)) {
        // Any process's ping changes nothing; ours tells that what was committed before it was heard.
        if (awaited && message.payload === awaited.payload) awaited.heard();
        return;
      }
      onNotification(message.payload);
    });
    client.on('error', (err) => lost('listening connection failed', err));
    client.on('end', () => lost('listening connection ended'));
    listener = client;

    /**
     * A notification sent through the pool, heard on this connection within `pingTimeoutMs`.
     * Notifications reach a listener in the order of their commits, so every change committed
     * before the ping has been heard once it is. It fails behind a pooler in transaction mode
     * (its LISTEN stays on a server connection the pooler lends to others), and when the
     * listening connection went silent without an error.
     */
    async function ping(): Promise<boolean> {
      const payload = `${PING}${randomBytes(12).toString('base64url')}`;
      let timer: NodeJS.Timeout | undefined;
      const heard = new Promise<boolean>((resolve) => {
        awaited = { payload, heard: () => resolve(true) };
        timer = setTimeout(() => resolve(false), pingTimeoutMs);
      });
      try {
        await sql`select pg_notify(${API_KEY_CHANGES_CHANNEL}, ${payload})`.execute(db);
        return await heard;
      } catch {
        return false;
      } finally {
        clearTimeout(timer);
        awaited = undefined;
      }
    }

    let listened = false;
    try {
      await client.connect();
      const pid = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      await client.query(`LISTEN ${API_KEY_CHANGES_CHANNEL}`);
      if (!(await ping())) throw new Error('a notification sent through the pool was not heard (a pooler in transaction mode between the service and PostgreSQL?)');
      if (!running) return false;
      // From here on every change committed is heard; what was loaded before may be older.
      forgetAll();
      inStep = true;
      listened = true;
      failedAttempts = 0;
      listenerPid = pid.rows[0]!.pid;
      const waiters = inStepWaiters;
      inStepWaiters = [];
      waiters.forEach((w) => w());
      settle(true);
      logger.info('API key cache: listening, keys verified from memory');
      let pinging = false;
      const heartbeat = setInterval(() => {
        if (pinging) return;
        pinging = true;
        void ping().then((ok) => {
          pinging = false;
          if (!ok && listener === client) {
            lost('a notification sent through the pool was not heard in time');
            client.end().catch(() => {});
          }
        });
      }, heartbeatMs);
      heartbeat.unref();
      await gone;
      clearInterval(heartbeat);
    } catch (err) {
      failedAttempts++;
      // Said at the first failure in a row, then every tenth: a deployment that cannot listen (a
      // pooler in transaction mode) must see why its keys are verified by the database.
      if (failedAttempts % 10 === 1) logger.warn({ err: { message: (err as Error).message }, attempts: failedAttempts }, 'API key cache: could not listen; verifying keys against the database');
      lost('could not listen', err);
      settle(false);
    } finally {
      if (listener === client) listener = undefined;
      deaf('listening connection closed');
      await client.end().catch(() => {});
    }
    return listened;
  }

  return {
    find,
    preload,
    start(listenUrl) {
      if (running || options.size <= 0) return;
      running = true;
      loop = (async () => {
        let backoff = reconnectMs;
        while (running) {
          const listened = await listenOnce(listenUrl);
          if (!running) break;
          backoff = listened ? reconnectMs : Math.min(backoff * 2, maxBackoffMs);
          await sleep(backoff);
        }
      })();
    },
    async stop() {
      running = false;
      stopWaiting?.();
      const client = listener;
      await client?.end().catch(() => {});
      await loop;
      deaf('stopped');
    },
    holds: (digest) => keys.has(digest.toString('hex')),
    epoch: () => (inStep ? epoch : null),
    settled(timeoutMs) {
      if (inStep) return Promise.resolve(true);
      if (!running) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        attemptWaiters.push((outcome) => {
          clearTimeout(timer);
          resolve(outcome);
        });
      });
    },
    state: () => ({ inStep, keys: keys.size, unknown: unknown.size, listenerPid, notifications }),
    inStep(timeoutMs = 10_000) {
      if (inStep) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`API key cache not in step within ${timeoutMs} ms`)), timeoutMs);
        inStepWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
