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

/**
 * The ping a listening connection waits for: one slot per connection, so that a heartbeat still in
 * flight when its connection was lost cannot clear the next connection's.
 */
interface PingSlot {
  awaited: { payload: string; heard: () => void } | undefined;
}

export class KeyCache {
  private readonly db: Kysely<Database>;
  private readonly logger: Logger;
  private readonly size: number;
  private readonly heartbeatMs: number;
  private readonly pingTimeoutMs: number;
  private readonly reconnectMs: number;
  private readonly maxBackoffMs: number;
  private readonly byKey = new Index();
  private readonly byCreator = new Index();
  private readonly keys: Lru<string, KeyBySecret>;
  private readonly unknown: Lru<string, true>;
  /** Loads in flight, shared by the requests asking for the same digest meanwhile. */
  private inflight = new Map<string, Promise<KeyBySecret | undefined>>();
  /** Moved by every notification and every change of listening state: a load that saw it move is not kept. */
  private currentEpoch = 0;
  /** In step: LISTEN has succeeded on a connection still up, and its first ping was heard. */
  private isInStep = false;
  private running = false;
  private listener: pg.Client | undefined;
  private listenerPid: number | null = null;
  private notifications = 0;
  /** Connection attempts that failed in a row. */
  private failedAttempts = 0;
  private loop: Promise<void> | undefined;
  private inStepWaiters: (() => void)[] = [];
  /** Waiting for the next outcome of a connection attempt: in step (true) or failed (false). */
  private attemptWaiters: ((inStep: boolean) => void)[] = [];
  private stopWaiting: (() => void) | undefined;

  constructor(deps: { db: Kysely<Database>; logger: Logger }, options: KeyCacheOptions) {
    this.db = deps.db;
    this.logger = deps.logger;
    this.size = options.size;
    this.heartbeatMs = options.heartbeatMs ?? 2_000;
    this.pingTimeoutMs = options.pingTimeoutMs ?? 5_000;
    this.reconnectMs = options.reconnectMs ?? 100;
    this.maxBackoffMs = Math.max(options.maxBackoffMs ?? 5_000, this.reconnectMs);
    this.keys = new Lru<string, KeyBySecret>(options.size, (digest, row) => {
      this.byKey.remove(row.id, digest);
      if (row.created_by) this.byCreator.remove(row.created_by, digest);
    });
    this.unknown = new Lru<string, true>(options.size);
  }

  /**
   * The key whose secret has this digest, from memory when in step, else from the database; undefined: no such secret.
   * An arrow function: it is handed around as a lookup (services.ts, apiKeyAuthenticator).
   */
  readonly find = async (digest: Buffer): Promise<KeyBySecret | undefined> => {
    if (!this.isInStep) return findKeyBySecretDigest(this.db, digest);
    const hex = digest.toString('hex');
    const cached = this.keys.get(hex);
    if (cached) return cached;
    if (this.unknown.get(hex)) return undefined;
    const pending = this.inflight.get(hex);
    if (pending) return pending;
    const loading = this.load(digest, hex);
    const shared = this.inflight;
    shared.set(hex, loading);
    try {
      return await loading;
    } finally {
      if (shared.get(hex) === loading) shared.delete(hex);
    }
  };

  /** Listens on PostgreSQL (never on the embedded database: it serves one connection). */
  start(listenUrl: string): void {
    if (this.running || this.size <= 0) return;
    this.running = true;
    this.loop = (async () => {
      let backoff = this.reconnectMs;
      while (this.running) {
        const listened = await this.listenOnce(listenUrl);
        if (!this.running) break;
        backoff = listened ? this.reconnectMs : Math.min(backoff * 2, this.maxBackoffMs);
        await this.sleep(backoff);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopWaiting?.();
    const client = this.listener;
    await client?.end().catch(() => {});
    await this.loop;
    this.deaf('stopped');
  }

  state(): KeyCacheState {
    return { inStep: this.isInStep, keys: this.keys.size, unknown: this.unknown.size, listenerPid: this.listenerPid, notifications: this.notifications };
  }

  /** Whether the key of this digest is in memory now (tests: that an answer came from memory). */
  holds(digest: Buffer): boolean {
    return this.keys.has(digest.toString('hex'));
  }

  /** Moves with every notification heard and every change of listening state; null while not in step (uses.ts: a lease of uses is good while it is unchanged). */
  epoch(): number | null {
    return this.isInStep ? this.currentEpoch : null;
  }

  /** Resolves once the cache is in step (tests; a timeout rejects). */
  inStep(timeoutMs = 10_000): Promise<void> {
    if (this.isInStep) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`API key cache not in step within ${timeoutMs} ms`)), timeoutMs);
      this.inStepWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** True once in step; false when a connection attempt fails first or `timeoutMs` passes (a start does not wait on a listener that cannot work). */
  settled(timeoutMs: number): Promise<boolean> {
    if (this.isInStep) return Promise.resolve(true);
    if (!this.running) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.attemptWaiters.push((outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      });
    });
  }

  /**
   * Once in step, loads the keys used since `since` (most recent first, up to the cache's size):
   * how many were kept. Nothing is kept when a notification overtakes the load (its rows may
   * predate the change): those keys load on demand instead.
   */
  async preload(since: Date, now: Date): Promise<number> {
    if (!this.isInStep) return 0;
    const started = this.currentEpoch;
    const rows = await keysUsedSince(this.db, since, now, this.size);
    if (!this.isInStep || this.currentEpoch !== started) return 0;
    // Oldest first, so that the most recently used end up the most recently kept.
    for (let i = rows.length - 1; i >= 0; i--) {
      const { digest, ...row } = rows[i]!;
      this.keep(digest.toString('hex'), row);
    }
    return rows.length;
  }

  private settle(outcome: boolean): void {
    const waiters = this.attemptWaiters;
    this.attemptWaiters = [];
    waiters.forEach((w) => w(outcome));
  }

  private forgetAll(): void {
    this.keys.clear();
    this.byKey.clear();
    this.byCreator.clear();
    this.unknown.clear();
    this.inflight = new Map();
    this.currentEpoch++;
  }

  private drop(digests: string[]): void {
    for (const digest of digests) this.keys.delete(digest);
  }

  private onNotification(payload: string | undefined): void {
    // Whatever it names, a load in flight may predate it: not kept, and not shared with later requests.
    this.currentEpoch++;
    this.notifications++;
    this.inflight = new Map();
    if (payload === undefined || payload === 'all') {
      this.forgetAll();
    } else if (payload === 'n') {
      this.unknown.clear();
    } else if (payload.startsWith('k:')) {
      this.drop(this.byKey.take(payload.slice(2)));
    } else if (payload.startsWith('u:')) {
      this.drop(this.byCreator.take(payload.slice(2)));
    } else {
      this.forgetAll(); // not ours to read: the safe answer
    }
  }

  private keep(hex: string, row: KeyBySecret): void {
    this.keys.set(hex, row);
    this.byKey.add(row.id, hex);
    if (row.created_by) this.byCreator.add(row.created_by, hex);
  }

  private async load(digest: Buffer, hex: string): Promise<KeyBySecret | undefined> {
    const started = this.currentEpoch;
    const row = await findKeyBySecretDigest(this.db, digest);
    if (this.isInStep && this.currentEpoch === started) {
      if (row) {
        this.keep(hex, row);
      } else {
        this.unknown.set(hex, true);
      }
    }
    return row;
  }

  private deaf(reason: string, err?: unknown): void {
    if (this.isInStep && this.running) this.logger.warn({ err: err ? { message: (err as Error).message } : undefined }, `API key cache: ${reason}; verifying keys against the database until listening again`);
    this.isInStep = false;
    this.listenerPid = null;
    this.forgetAll();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.stopWaiting = undefined;
        resolve();
      }, ms);
      this.stopWaiting = () => {
        clearTimeout(timer);
        this.stopWaiting = undefined;
        resolve();
      };
    });
  }

  /**
   * One connection's life: connect, LISTEN, prove that a notification sent by another connection
   * (a pooled one, as every change is) comes back, and only then answer from memory; then the
   * same proof every `heartbeatMs` until it fails, the connection errs or it ends.
   */
  private async listenOnce(url: string): Promise<boolean> {
    const client = new pg.Client({ connectionString: url, application_name: 'backoffice-api-keys', keepAlive: true });
    let lost: (reason: string, err?: unknown) => void = () => {};
    const gone = new Promise<void>((resolve) => {
      lost = (reason, err) => {
        this.deaf(reason, err);
        resolve();
      };
    });
    /** The ping this connection waits for. */
    const slot: PingSlot = { awaited: undefined };
    client.on('notification', (message) => {
      if (message.channel !== API_KEY_CHANGES_CHANNEL) return;
      if (message.payload?.startsWith(PING)) {
        // Any process's ping changes nothing; ours tells that what was committed before it was heard.
        if (slot.awaited && message.payload === slot.awaited.payload) slot.awaited.heard();
        return;
      }
      this.onNotification(message.payload);
    });
    client.on('error', (err) => lost('listening connection failed', err));
    client.on('end', () => lost('listening connection ended'));
    this.listener = client;

    let listened = false;
    try {
      await client.connect();
      const pid = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      await client.query(`LISTEN ${API_KEY_CHANGES_CHANNEL}`);
      if (!(await this.ping(slot))) throw new Error('a notification sent through the pool was not heard (a pooler in transaction mode between the service and PostgreSQL?)');
      if (!this.running) return false;
      // From here on every change committed is heard; what was loaded before may be older.
      this.forgetAll();
      this.isInStep = true;
      listened = true;
      this.failedAttempts = 0;
      this.listenerPid = pid.rows[0]!.pid;
      const waiters = this.inStepWaiters;
      this.inStepWaiters = [];
      waiters.forEach((w) => w());
      this.settle(true);
      this.logger.info('API key cache: listening, keys verified from memory');
      let pinging = false;
      const heartbeat = setInterval(() => {
        if (pinging) return;
        pinging = true;
        void this.ping(slot).then((ok) => {
          pinging = false;
          if (!ok && this.listener === client) {
            lost('a notification sent through the pool was not heard in time');
            client.end().catch(() => {});
          }
        });
      }, this.heartbeatMs);
      heartbeat.unref();
      await gone;
      clearInterval(heartbeat);
    } catch (err) {
      this.failedAttempts++;
      // Said at the first failure in a row, then every tenth: a deployment that cannot listen (a
      // pooler in transaction mode) must see why its keys are verified by the database.
      if (this.failedAttempts % 10 === 1) this.logger.warn({ err: { message: (err as Error).message }, attempts: this.failedAttempts }, 'API key cache: could not listen; verifying keys against the database');
      lost('could not listen', err);
      this.settle(false);
    } finally {
      if (this.listener === client) this.listener = undefined;
      this.deaf('listening connection closed');
      await client.end().catch(() => {});
    }
    return listened;
  }

  /**
   * A notification sent through the pool, heard on the listening connection (the one whose `slot`
   * this is) within `pingTimeoutMs`. Notifications reach a listener in the order of their commits,
   * so every change committed before the ping has been heard once it is. It fails behind a pooler
   * in transaction mode (its LISTEN stays on a server connection the pooler lends to others), and
   * when the listening connection went silent without an error.
   */
  private async ping(slot: PingSlot): Promise<boolean> {
    const payload = `${PING}${randomBytes(12).toString('base64url')}`;
    let timer: NodeJS.Timeout | undefined;
    const heard = new Promise<boolean>((resolve) => {
      slot.awaited = { payload, heard: () => resolve(true) };
      timer = setTimeout(() => resolve(false), this.pingTimeoutMs);
    });
    try {
      await sql`select pg_notify(${API_KEY_CHANGES_CHANNEL}, ${payload})`.execute(this.db);
      return await heard;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
      slot.awaited = undefined;
    }
  }
}
