// Endpoints for operators and readers, outside the contract: probes and the published reference.
import { readFileSync, existsSync } from 'node:fs';
import { Router, type Request } from 'express';
import { sql, type Kysely } from 'kysely';
import type { StyledContracts } from '../contract/styled.js';
import type { Database } from '../db/schema.js';
import { docsHtmlPath } from '../paths.js';
import { INFLECTION_HEADER, INFLECTIONS, parseInflection, type Inflection } from './inflection.js';
import { ProblemError } from './problem.js';

/** What the reference may do in its sandbox: run its scripts, open links in new tabs. */
const DOCS_SANDBOX = 'allow-scripts allow-popups allow-popups-to-escape-sandbox';
const DOCS_POLICY = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; worker-src 'self' blob:; font-src 'self' data:; connect-src 'none'; form-action 'none'; base-uri 'none'";

/**
 * Redoc keeps its settings in localStorage and cookies and stops rendering when reading them
 * throws, as it does in the sandbox: before it runs, the page gets storage of its own, in memory.
 * Only a stand-in: a script that removes it still meets the browser's refusal, never the back
 * office's storage.
 */
const MEMORY_STORAGE = `(() => {
  const memory = () => { const items = new Map(); return {
    getItem: (k) => (items.has(String(k)) ? items.get(String(k)) : null), setItem: (k, v) => void items.set(String(k), String(v)),
    removeItem: (k) => void items.delete(String(k)), clear: () => items.clear(), key: (i) => [...items.keys()][i] ?? null,
    get length() { return items.size; } }; };
  for (const name of ['localStorage', 'sessionStorage']) {
    try { void window[name]; } catch { Object.defineProperty(window, name, { value: memory(), configurable: true }); }
  }
  try { void document.cookie; } catch {
    const jar = new Map();
    Object.defineProperty(document, 'cookie', { configurable: true,
      get: () => [...jar].map(([k, v]) => k + '=' + v).join('; '),
      set: (text) => { const [pair] = String(text).split(';'); const at = pair.indexOf('='); if (at > 0) jar.set(pair.slice(0, at).trim(), pair.slice(at + 1)); } });
  }
})();`;

/**
 * The key style a reader asks the contract or the reference in: `?style=` first (a link, a browser
 * address bar), then the x-api-inflection header (a client fetching its own contract), else snake.
 */
function requestedStyle(req: Request): Inflection {
  const query = req.query.style as string | string[] | undefined;
  if (query !== undefined) return parseInflection(query, 'The style query parameter');
  return parseInflection(req.headers[INFLECTION_HEADER]);
}

export function operationalRoutes(db: Kysely<Database>, contracts: StyledContracts): Router {
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
    // The Redoc page is one self-contained file with inline scripts and styles. It shares its origin
    // with the back office, which keeps its refresh token in localStorage: `sandbox` without
    // allow-same-origin runs the page in an opaque origin of its own, so its scripts (and any that
    // were injected) can reach neither that storage nor the cookies, nor call the API as the user.
    res.set('Content-Security-Policy', `sandbox ${DOCS_SANDBOX}; ${DOCS_POLICY}`);
    res.type('html').send(readFileSync(page, 'utf8').replace('<head>', `<head><script>${MEMORY_STORAGE}</script>`));
  });
  return router;
}
