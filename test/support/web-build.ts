// Vitest global set-up: builds the web interface into web/dist when it is missing or older than
// its sources, so `npx vitest run` tests the current pages (`make test` has built them already).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'vite';
import { PROJECT_ROOT, WEB_DIST_PATH } from '../../src/paths.js';

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

export default async function setup() {
  const web = join(PROJECT_ROOT, 'web');
  const built = join(WEB_DIST_PATH, 'index.html');
  const sources = ['src', 'index.html', 'vite.config.ts'].map((name) => join(web, name));
  sources.push(join(PROJECT_ROOT, 'generated', 'openapi.d.ts'));
  if (existsSync(built) && statSync(built).mtimeMs >= Math.max(...sources.map(newestMtime))) return;
  await build({ root: web, logLevel: 'warn' });
}
