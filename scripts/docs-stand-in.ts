// Puts the in-memory storage stand-in into each built Redoc page (see src/http/docs-sandbox.ts).
// Usage: node --import tsx scripts/docs-stand-in.ts dist/docs/*.html
import { readFileSync, writeFileSync } from 'node:fs';
import { withStorageStandIn } from '../src/http/docs-sandbox.js';

for (const page of process.argv.slice(2)) writeFileSync(page, withStorageStandIn(readFileSync(page, 'utf8')));
