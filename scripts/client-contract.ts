// The contract as the TypeScript client package (clients/typescript/) sees it: the generated types
// of every key style, and the operations that take an Idempotency-Key, derived from generated/.
// `node --import tsx scripts/client-contract.ts` writes them; `--check` fails on drift (make lint
// runs it, and so does test/client-contract-drift.test.ts).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLIENT_CONTRACT_DIR = join(ROOT, 'clients/typescript/src/contract');
const STYLES = { snake: 'openapi', camel: 'openapi.camel', dash: 'openapi.dash', pascal: 'openapi.pascal' } as const;
const HEADER = '// Copied from generated/%s.d.ts by scripts/client-contract.ts: do not edit (make client).\n';

interface Operation { parameters?: { $ref?: string; name?: string; in?: string }[] }

/** Every file of clients/typescript/src/contract/, by name, as it should read now. */
export function renderClientContract(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [style, bundle] of Object.entries(STYLES)) {
    files[`${style}.d.ts`] = HEADER.replace('%s', bundle) + readFileSync(join(ROOT, 'generated', `${bundle}.d.ts`), 'utf8');
  }
  const contract = JSON.parse(readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8')) as {
    info: { version: string };
    paths: Record<string, Record<string, Operation>>;
    components: { parameters: Record<string, { name: string; in: string }> };
  };
  const idempotent: string[] = [];
  for (const [path, item] of Object.entries(contract.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const names = (operation.parameters ?? []).map((p) => (p.$ref ? contract.components.parameters[p.$ref.split('/').pop()!] : p)).filter((p) => p?.in === 'header').map((p) => p!.name!.toLowerCase());
      if (names.includes('idempotency-key')) idempotent.push(`${method.toUpperCase()} ${path}`);
    }
  }
  files['operations.ts'] =
    `// Derived from generated/openapi.json by scripts/client-contract.ts: do not edit (make client).\n\n` +
    `/** info.version of the contract this client was built from. */\nexport const CONTRACT_VERSION = ${JSON.stringify(contract.info.version)};\n\n` +
    `/** The operations (method and path template) that take an Idempotency-Key: every create. */\n` +
    `export const IDEMPOTENT_OPERATIONS: ReadonlySet<string> = new Set([\n${idempotent.map((o) => `  ${JSON.stringify(o)},`).join('\n')}\n]);\n`;
  return files;
}

/** The names of the files that differ from what they should read. */
export function clientContractDrift(): string[] {
  return Object.entries(renderClientContract())
    .filter(([name, text]) => {
      try {
        return readFileSync(join(CLIENT_CONTRACT_DIR, name), 'utf8') !== text;
      } catch {
        return true;
      }
    })
    .map(([name]) => name);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--check')) {
    const drift = clientContractDrift();
    if (drift.length > 0) {
      console.error(`clients/typescript/src/contract is out of date (${drift.join(', ')}): run make client`);
      process.exit(1);
    }
  } else {
    mkdirSync(CLIENT_CONTRACT_DIR, { recursive: true });
    for (const [name, text] of Object.entries(renderClientContract())) writeFileSync(join(CLIENT_CONTRACT_DIR, name), text);
  }
}
