// Security headers, in two sets (OWASP's REST Security Cheat Sheet, "Security Headers"):
//
// - Every answer gets the API set: what protects a JSON answer a browser may be led to load.
//   `Strict-Transport-Security` (docs/DEPLOYMENT.md), `X-Content-Type-Options: nosniff` (never read
//   as HTML or script), and no framing at all, by CSP `frame-ancestors 'none'` and
//   `X-Frame-Options: DENY` (stricter than helmet's SAMEORIGIN: nothing of ours frames the API).
//   Its CSP also says `default-src 'none'`: a JSON answer loads nothing. (Cache-Control: no-store
//   is cache-control.ts's.)
// - A page (the back office's index.html, the reference at /docs) also gets helmet's headers for
//   documents (cross-origin isolation, referrer, DNS prefetch, ...), which do nothing on a JSON
//   answer; each page sets its own Content-Security-Policy over the API set's.
//
// Why not helmet on everything: its twelve headers (~650 bytes) on every answer cost the hot paths
// CPU and garbage on every request (docs/BENCHMARKS.md), for nothing an API client or
// a browser reading JSON acts on.
//
// helmet's values are all fixed with its defaults (no per-request nonce), so they are computed once,
// here, into a recorder: per request helmet would rebuild the CSP text and run a dozen middlewares.
import helmet from 'helmet';
import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';

type Header = readonly [name: string, value: string];

const API_HEADERS: readonly Header[] = [
  ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
];

/** helmet's defaults, recorded once; its CSP is left to each page, and framing to the API set. */
function helmetPageHeaders(): readonly Header[] {
  const headers: Header[] = [];
  const recorder = {
    setHeader: (name: string, value: string) => void headers.push([name, value]),
    // Express's X-Powered-By is off already (app.ts).
    removeHeader: () => {},
  };
  let finished = false;
  helmet()({} as never, recorder as never, (err?: unknown) => {
    if (err) throw err;
    finished = true;
  });
  if (!finished || headers.length === 0) throw new Error('helmet did not set its headers synchronously: apply it per request instead');
  const apiNames = new Set(API_HEADERS.map(([name]) => name.toLowerCase()));
  return headers.filter(([name]) => !apiNames.has(name.toLowerCase()));
}

const PAGE_HEADERS = helmetPageHeaders();

/** The API set, on every answer (the first step that can answer sets it). */
export function securityHeaders(): RequestHandler {
  return (_req, res, next) => {
    for (const [name, value] of API_HEADERS) res.setHeader(name, value);
    next();
  };
}

/** A page's headers, over the API set: helmet's for documents, and the page's own CSP. */
export function setPageHeaders(res: ServerResponse, contentSecurityPolicy: string): void {
  for (const [name, value] of PAGE_HEADERS) res.setHeader(name, value);
  res.setHeader('Content-Security-Policy', contentSecurityPolicy);
}
