// Serves the back-office single-page application (web/, built by Vite into web/dist) at `/`.
// Mounted before the contract validator, it answers only what the API does not own: the built
// files, and index.html for any other GET that a browser makes for a page. A path of the contract
// (whatever the method), or a request that does not accept HTML, passes through untouched.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router, type Request, type RequestHandler } from 'express';
import { WEB_DIST_PATH } from '../paths.js';
import { ProblemError } from './problem.js';
import { setPageHeaders } from './security-headers.js';

// The built scripts and styles are the only resources the page loads; the API is same-origin.
const PAGE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export function webApp(root = WEB_DIST_PATH): RequestHandler {
  const indexHtml = join(root, 'index.html');
  const router = Router();
  // Vite puts content-hashed files under assets/: they never change, so browsers may keep them.
  router.use('/assets', express.static(join(root, 'assets'), { index: false, immutable: true, maxAge: '1y' }));
  router.use('/assets', (_req, _res, next) => next(new ProblemError(404, 'not_found', 'No such file of the web interface.')));
  // index.html asked for by name is the page too: the page's headers, not the API's.
  router.use(express.static(root, { index: false, maxAge: 0, setHeaders: (res, path) => {
    if (path.endsWith('.html')) setPageHeaders(res, PAGE_CSP);
  } }));
  router.use((req, res, next) => {
    if (!wantsPage(req)) return next();
    if (!existsSync(indexHtml)) {
      res.status(404).type('text/plain').send('The web interface is not built: run `make web`.');
      return;
    }
    setPageHeaders(res, PAGE_CSP);
    res.set('Cache-Control', 'no-cache');
    res.sendFile(indexHtml);
  });
  // Everything in the router is for reading pages; an API path is never shadowed, whatever is
  // built, and an API request does not even enter the router.
  return (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || res.locals.route?.pathTemplate !== undefined) return next();
    router(req, res, next);
  };
}

/** A browser navigating to a page asks for HTML first; fetch() and API clients ask for JSON. */
function wantsPage(req: Request): boolean {
  return req.accepts(['application/json', 'text/html']) === 'text/html';
}
