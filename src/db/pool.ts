// pg's Pool, with its acquire timeout armed only when an acquire may have to wait.
import pg from 'pg';

/**
 * pg-pool (3.14) arms the acquire timeout (`connectionTimeoutMillis`) on every connect() that does
 * not open a new connection, even when an idle one is handed over on the next tick: a timer set,
 * unref'd and cleared for every statement run on the pool, two of them per `GET /users`
 * (docs/BENCHMARKS.md). When more connections are idle than acquires wait, this
 * acquire is sure of one without waiting (the queue is served in order, and a connection that
 * leaves the idle list makes room for a new one, which has its own connection timeout), so it is
 * queued without the timer. Any other acquire is timed. (One acquire left untimed: one
 * made in the tick before pool.end(), which pg-pool then never answers; ours end at shutdown only,
 * after the server has stopped taking requests.)
 */
export class UntimedWhenIdlePool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override connect(callback?: any): any {
    const options = this.options as { connectionTimeoutMillis?: number };
    const timeout = options.connectionTimeoutMillis;
    if (!timeout || this.idleCount <= this.waitingCount) return super.connect(callback);
    options.connectionTimeoutMillis = 0;
    try {
      return super.connect(callback);
    } finally {
      options.connectionTimeoutMillis = timeout;
    }
  }
}
