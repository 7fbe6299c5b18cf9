// Writes the declared path aliases (x-path-aliases) into the bundle. Run by scripts/generate.sh.
// Usage: node --import tsx scripts/alias-paths.ts <bundle.json>
import { readFileSync, writeFileSync } from 'node:fs';
import { withPathAliases } from '../src/contract/path-aliases.js';
import type { OpenApiDocument } from '../src/contract/spec.js';

const file = process.argv[2] ?? 'generated/openapi.json';
const bundle = JSON.parse(readFileSync(file, 'utf8')) as OpenApiDocument;
writeFileSync(file, `${JSON.stringify(withPathAliases(bundle), null, 2)}\n`);
