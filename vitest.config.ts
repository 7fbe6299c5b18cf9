import { randomBytes } from 'node:crypto';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The tests of the benchmarks' own machinery live beside them (bench/tests/).
    include: ['test/**/*.test.ts', 'bench/tests/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts', 'test/support/web-build.ts'],
    // In every file: code holding a database connection must not ask for another (README.md).
    setupFiles: ['test/support/one-connection.ts'],
    // The sealing key of the run (docs/DEPLOYMENT.md): the service refuses PostgreSQL without one.
    // In the environment, so that the server processes and commands the tests start have it too.
    env: { SEALING_KEYS: `test-run:${randomBytes(32).toString('base64')}` },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: keep the number of parallel files small so timing-sensitive auth code is not starved.
    maxWorkers: 2,
  },
});
