// Writes the declared path aliases (x-path-aliases) into the bundle. Run by scripts/generate.sh.
// Usage: node --import tsx scripts/alias-paths.ts <bundle.json>
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { aliasOperations, withPathAliases } from '../src/contract/path-aliases.js';
import type { OpenApiDocument } from '../src/contract/spec.js';

const file = process.argv[2] ?? 'generated/openapi.json';
const bundle = JSON.parse(readFileSync(file, 'utf8')) as OpenApiDocument;
const aliased = withPathAliases(bundle);
writeFileSync(file, `${JSON.stringify(aliased, null, 2)}\n`);
// Their operationIds as a type, so the handler map asks only for the operations of their originals.
const ids = [...aliasOperations(aliased).keys()].sort();
writeFileSync(
  join(dirname(file), 'operation-aliases.d.ts'),
  `// Made by scripts/alias-paths.ts from the contract's x-path-aliases: served by their originals' handlers.\nexport type AliasOperationId =\n${ids.map((id) => `  | '${id}'`).join('\n')};\n`,
);
