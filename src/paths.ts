// Locations of the files the service reads at run time, whether it runs from src/ (tsx, vitest)
// or from the compiled dist/src/.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`No package.json above ${start}`);
    dir = parent;
  }
  return dir;
}

export const PROJECT_ROOT = findProjectRoot(dirname(fileURLToPath(import.meta.url)));
export const BUNDLED_SPEC_PATH = join(PROJECT_ROOT, 'generated', 'openapi.json');
export const DOCS_HTML_PATH = join(PROJECT_ROOT, 'dist', 'docs', 'index.html');

/** The bundled contract in a key style of x-api-inflection (`make generate`); snake is the bundle itself. */
export const bundlePath = (style: string) => join(PROJECT_ROOT, 'generated', style === 'snake' ? 'openapi.json' : `openapi.${style}.json`);
/** The Redoc page of a key style (`make docs`). */
export const docsHtmlPath = (style: string) => (style === 'snake' ? DOCS_HTML_PATH : join(PROJECT_ROOT, 'dist', 'docs', `index.${style}.html`));
export const WEB_DIST_PATH = join(PROJECT_ROOT, 'web', 'dist');
