// Builds the back-office SPA into web/dist, which the service serves at `/` (src/http/web-app.ts).
// Run from the repository root as `vite build web` (make web); `vite web` serves it for development
// with the API proxied to a service on :3000.
import { defineConfig } from 'vite';

const API = 'http://localhost:3000';
const apiPrefixes = ['/sessions', '/tokens', '/jetons', '/me', '/users', '/utilisateurs', '/roles', '/permissions', '/api-keys', '/audit-events'];

export default defineConfig(({ command }) => ({
  // Development JSX (source file paths and line numbers in every element) only for `vite web`: a
  // build is always production, even when started with NODE_ENV=test (the tests' global set-up).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact', development: command === 'serve' } },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  server: { proxy: Object.fromEntries(apiPrefixes.map((prefix) => [prefix, API])) },
}));
