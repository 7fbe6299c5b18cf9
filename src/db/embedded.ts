// The embedded default database: PGlite (PostgreSQL compiled to WASM) persisted under a data
// folder, exposed on a loopback port by pglite-socket. We chose the socket over a Kysely PGlite
// dialect because it has the fewest moving parts: the service keeps the one `pg` driver and the
// one PostgresDialect, so the embedded and real databases run exactly the same code path.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { unaccent } from '@electric-sql/pglite/contrib/unaccent';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export async function startEmbeddedPostgres(dataDir: string) {
  const dir = resolve(dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  // The extensions the migrations create (tasks' title search).
  const pglite = await PGlite.create(dir, { extensions: { pg_trgm, unaccent } });
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0 });
  await server.start();
  return {
    // getServerConn() answers "host:port" with the port the system picked.
    connectionString: `postgres://postgres@${server.getServerConn()}/postgres`,
    dir,
    async stop() {
      await server.stop();
      await pglite.close();
    },
  };
}
