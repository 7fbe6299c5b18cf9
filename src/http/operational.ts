// Endpoints for operators and readers, outside the contract: probes and the published reference.
import { readFileSync, existsSync } from 'node:fs';
import { Router } from 'express';
import { sql, type Kysely } from 'kysely';
import type { OpenApiDocument } from '../contract/spec.js';
import type { Database } from '../db/schema.js';
import { DOCS_HTML_PATH } from '../paths.js';
import { ProblemError } from './problem.js';

export function operationalRoutes(db: Kysely<Database>, spec: OpenApiDocument): Router {
  const router = Router();
  // Liveness: the process answers. It never touches the database, so a database outage does not
  // get the process restarted.
  router.get('/livez', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Readiness: the database answers; a load balancer stops sending traffic while it does not.
  router.get('/readyz', async (req, res) => {
    try {
      await sql`select 1`.execute(db);
      res.json({ status: 'ok' });
    } catch (err) {
      req.log.warn({ err: { message: (err as Error).message } }, 'readiness check failed');
      throw new ProblemError(503, 'service_unavailable', 'The database is not reachable.');
    }
  });
  const specJson = JSON.stringify(spec);
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(specJson);
  });
  router.get(['/docs', '/docs/'], (_req, res) => {
    if (!existsSync(DOCS_HTML_PATH)) {
      res.status(404).type('text/plain').send('The reference is not built: run `make docs`.');
      return;
    }
    // The Redoc page is one self-contained file with inline scripts and styles.
    res.set('Content-Security-Policy', "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; worker-src 'self' blob:; font-src 'self' data:");
    res.type('html').send(readFileSync(DOCS_HTML_PATH));
  });
  return router;
}
