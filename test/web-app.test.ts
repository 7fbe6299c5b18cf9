// The service serves the built interface at `/` without shadowing anything the API or the
// operators own: API paths (whatever Accept says), /docs, /openapi.json, the probes.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, WEB_DIST_PATH } from '../src/paths.js';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import * as pages from '../web/src/pages/registry.js';
import type { PageEntry } from '../web/src/page-entry.js';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
let database: TestDatabase;
let app: ReturnType<typeof createTestApp>['app'];

beforeAll(async () => {
  database = await createTestDatabase();
  app = createTestApp(database.db).app;
});
afterAll(() => database.destroy());

describe('the web interface', () => {
  it('serves the page at / with a strict Content-Security-Policy', async () => {
    const res = await request(app).get('/').set('Accept', BROWSER_ACCEPT).expect(200);
    expect(res.type).toBe('text/html');
    expect(res.text).toContain('<div id="app"></div>');
    expect(res.headers['content-security-policy']).toContain("script-src 'self';");
    expect(res.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it('serves the built scripts as immutable files, and 404s a missing one as a problem', async () => {
    const script = readdirSync(join(WEB_DIST_PATH, 'assets')).find((name) => name.endsWith('.js'));
    const res = await request(app).get(`/assets/${script}`).expect(200);
    expect(res.type).toBe('text/javascript');
    expect(res.headers['cache-control']).toContain('immutable');
    // A production build: no development JSX carrying this machine's source paths into every page
    // (the tests' own build of web/ runs with NODE_ENV=test).
    expect(res.text).not.toContain('jsxDEV');
    expect(res.text).not.toContain(PROJECT_ROOT);
    const missing = await request(app).get('/assets/nothing-here.js').expect(404);
    expect(missing.type).toBe('application/problem+json');
  });

  it('answers index.html for any other page a browser asks for', async () => {
    const res = await request(app).get('/some/deep/link').set('Accept', BROWSER_ACCEPT).expect(200);
    expect(res.text).toContain('<div id="app"></div>');
  });

  it('never shadows an API path, even when a browser asks for HTML', async () => {
    const res = await request(app).get('/users').set('Accept', BROWSER_ACCEPT);
    expect(res.status).toBe(401);
    expect(res.type).toBe('application/problem+json');
    const french = await request(app).get('/utilisateurs/').set('Accept', BROWSER_ACCEPT);
    expect(french.status).toBe(401);
  });

  it('leaves the reference, the spec and the probes alone', async () => {
    expect((await request(app).get('/openapi.json').set('Accept', BROWSER_ACCEPT)).type).toBe('application/json');
    expect((await request(app).get('/livez').set('Accept', BROWSER_ACCEPT)).body).toEqual({ status: 'ok' });
    const docs = await request(app).get('/docs').set('Accept', BROWSER_ACCEPT);
    expect(docs.text).not.toContain('<div id="app"></div>');
  });

  it('is not an answer to API clients: JSON requests and other methods still get problems', async () => {
    const json = await request(app).get('/nowhere').set('Accept', 'application/json').expect(404);
    expect(json.type).toBe('application/problem+json');
    const post = await request(app).post('/').set('Accept', BROWSER_ACCEPT).expect(404);
    expect(post.type).toBe('application/problem+json');
  });
});

describe('the registry of pages (web/src/pages/registry.ts)', () => {
  const entries: readonly PageEntry[] = Object.values(pages).map((entry) => entry.page);

  it('names, for every page, a module that exports its component', () => {
    expect(entries.length).toBeGreaterThan(10);
    for (const entry of entries) {
      const source = readFileSync(join(PROJECT_ROOT, 'web/src/pages', `${entry.module}.tsx`), 'utf8');
      expect(source, `${entry.module}.tsx exports ${entry.exportName ?? 'Route'}`).toMatch(new RegExp(`export const ${entry.exportName ?? 'Route'} = `));
    }
  });

  it('gives every route one page', () => {
    const routes = entries.map((entry) => entry.route);
    expect(new Set(routes).size).toBe(routes.length);
  });
});
