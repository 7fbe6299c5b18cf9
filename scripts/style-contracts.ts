// Writes the contract in every key style next to the bundle: <dir>/openapi.<style>.json for each
// x-api-inflection style but snake (the bundle itself). Run by scripts/generate.sh.
// Usage: node --import tsx scripts/style-contracts.ts <dir>
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { styledContracts } from '../src/contract/styled.js';
import { INFLECTIONS } from '../src/contract/inflection.js';
import type { OpenApiDocument } from '../src/contract/spec.js';

const dir = process.argv[2] ?? 'generated';
const bundle = JSON.parse(readFileSync(join(dir, 'openapi.json'), 'utf8')) as OpenApiDocument;
const contracts = styledContracts(bundle);
for (const style of INFLECTIONS) {
  if (style === 'snake') continue;
  writeFileSync(join(dir, `openapi.${style}.json`), `${JSON.stringify(contracts[style], null, 2)}\n`);
}
