// Endpoints for operators and readers, outside the contract: probes and the published reference.
import { readFileSync, existsSync } from 'node:fs';
import { Router, type Request, type RequestHandler } from 'express';
import { sql, type Kysely } from 'kysely';
import type { StyledContracts } from '../contract/styled.js';
import type { Database } from '../db/schema.js';
import { docsHtmlPath } from '../paths.js';
import { INFLECTION_HEADER, INFLECTIONS, type Inflection } from '../contract/inflection.js';
import { parseInflection } from './inflection.js';
import { ProblemError } from './problem.js';
import { DOCS_CSP } from './docs-sandbox.js';
import { setPageHeaders } from './security-headers.js';
import type { Drain } from './drain.js';

/**
 * The key style a reader asks the contract or the reference in: `?style=` first (a link, a browser
 * address bar), then the x-api-inflection header (a client fetching its own contract), else snake.
 */
function requestedStyle(req: Request): Inflection {
  const query = req.query.style as string | string[] | undefined;
  if (query !== undefined) return parseInflection(query, 'The style query parameter');
  return parseInflection(req.headers[INFLECTION_HEADER]);
}

export function operationalRoutes(db: Kysely<Database>, contracts: StyledContracts, drain: Drain): RequestHandler {
  const router = Router();
  // Liveness: the process answers. It never touches the database, so a database outage does not
  // get the process restarted.
  router.get('/livez', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Readiness: the database answers and the process is not shutting down; a load balancer stops
  // sending traffic while it is not ready.
  router.get('/readyz', async (req, res) => {
    if (drain.draining) throw new ProblemError(503, 'service_unavailable', 'The process is shutting down.');
    try {
      await sql`select 1`.execute(db);
      res.json({ status: 'ok' });
    } catch (err) {
      req.log.warn({ err: { message: (err as Error).message } }, 'readiness check failed');
      throw new ProblemError(503, 'service_unavailable', 'The database is not reachable.');
    }
  });
  // The contract in each key style (generated/openapi.<style>.json are the same documents).
  const served = Object.fromEntries(INFLECTIONS.map((style) => [style, JSON.stringify(contracts[style])])) as Record<Inflection, string>;
  router.get('/openapi.json', (req, res) => {
    res.vary(INFLECTION_HEADER);
    res.type('application/json').send(served[requestedStyle(req)]);
  });
  // One Redoc page per style (make docs); each links to the others from its introduction.
  router.get(['/docs', '/docs/'], (req, res) => {
    res.vary(INFLECTION_HEADER);
    const page = docsHtmlPath(requestedStyle(req));
    if (!existsSync(page)) {
      res.status(404).type('text/plain').send('The reference is not built: run `make docs`.');
      return;
    }
    // One self-contained file with inline scripts and styles, sandboxed away from the back office.
    setPageHeaders(res, DOCS_CSP);
    res.type('html').send(readFileSync(page));
  });
  // Only these paths enter the router: the API's requests pass by without a router's dispatch.
  const paths = new Set(['/livez', '/readyz', '/openapi.json', '/docs', '/docs/']);
  return (req, res, next) => (paths.has(req.path) ? router(req, res, next) : next());
}
