// Builds the package into dist/ (ESM and declarations; the browser's lib and no Node types, so
// nothing Node-only slips in), copies the contract's types beside them, and puts the two runtime
// dependencies in node_modules/ so that `npm pack` bundles them (bundleDependencies): the tarball
// installs with no registry at all. Run by `npm run build` and `npm pack` (prepack).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(here, '..', '..', 'package.json'));

rmSync(join(here, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
mkdirSync(join(here, 'dist/contract'), { recursive: true });
for (const file of readdirSync(join(here, 'src/contract'))) {
  if (file.endsWith('.d.ts')) cpSync(join(here, 'src/contract', file), join(here, 'dist/contract', file));
}
for (const name of ['openapi-fetch', 'openapi-typescript-helpers']) {
  const source = realpathSync(dirname(require.resolve(`${name}/package.json`)));
  const target = join(here, 'node_modules', name);
  if (existsSync(target) && realpathSync(target) === source) continue;
  rmSync(target, { recursive: true, force: true });
  cpSync(source, target, { recursive: true });
}
