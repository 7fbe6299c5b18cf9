// Builds the back-office SPA into web/dist, which the service serves at `/` (src/http/web-app.ts).
// Run from the repository root as `vite build web` (make web); `vite web` serves it for development
// with the API proxied to a service on :3000.
import { readFileSync } from 'node:fs';
import { defineConfig, type Plugin } from 'vite';

/**
 * The contract's lists the pages offer (event types, permissions, resources), read from
 * generated/openapi.json at build time and served as the module `virtual:contract-enums`: a
 * value added to the contract reaches every select and checkbox list without a page changing,
 * and only these lists are bundled, not the 700 kB contract. Typed in web/src/contract-enums.d.ts.
 */
const CONTRACT_ENUMS = ['AuditEventType', 'AuditTargetType', 'EventType', 'Permission'] as const;
function contractEnums(): Plugin {
  const id = 'virtual:contract-enums';
  const contract = new URL('../generated/openapi.json', import.meta.url);
  return {
    name: 'contract-enums',
    resolveId: (source) => (source === id ? `\0${id}` : undefined),
    load(resolved) {
      if (resolved !== `\0${id}`) return undefined;
      this.addWatchFile(contract.pathname);
      const schemas = (JSON.parse(readFileSync(contract, 'utf8')) as { components: { schemas: Record<string, { enum?: string[] }> } }).components.schemas;
      return CONTRACT_ENUMS.map((name) => {
        const values = schemas[name]?.enum;
        if (!values) throw new Error(`generated/openapi.json has no enum ${name}`);
        return `export const ${name} = Object.freeze(${JSON.stringify(values)});`;
      }).join('\n');
    },
  };
}

const API = 'http://localhost:3000';
const apiPrefixes = ['/sessions', '/tokens', '/jetons', '/me', '/users', '/utilisateurs', '/roles', '/permissions', '/api-keys', '/audit-events'];

export default defineConfig(({ command }) => ({
  // Development JSX (source file paths and line numbers in every element) only for `vite web`: a
  // build is always production, even when started with NODE_ENV=test (the tests' global set-up).
  plugins: [contractEnums()],
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact', development: command === 'serve' } },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  server: { proxy: Object.fromEntries(apiPrefixes.map((prefix) => [prefix, API])) },
}));
