// How long a test may wait on one heavy step before the step is taken for hung. A budget is never a
// speed check: on a loaded two-core machine starting a process takes tens of seconds, and a test
// that passes alone must pass there too. So a test's timeout is the sum of the budgets of the steps
// it takes (`budget({ cliRun: 3 })`): three processes get three budgets, never one fixed 30 s to
// share (docs/RELIABILITY.md, "The test suite on a busy machine").
export const BUDGET_MS = {
  /** One run of the command line (`node --import tsx src/cli/main.ts`), from spawn to exit. */
  cliRun: 120_000,
  /** One server process (`src/main.ts`), from spawn to /livez answering. */
  serverStart: 120_000,
  /** The embedded database (PostgreSQL in WebAssembly) opened and migrated in the test's process. */
  pgliteStart: 120_000,
  /**
   * One argon2 hash or verification (a user made with a password, a sign-in). Cheap alone (tens of
   * milliseconds), but the hashing threads run at nice 10 (src/auth/secrets/passwords.ts), so on a machine
   * busy with other work they get a tenth of a share: ten seconds and more each.
   */
  passwordHash: 30_000,
  /** One Prism: `make mock` (scripts/mock-server.ts, the four styles' contracts in one process) or a validation proxy, from spawn to listening. */
  mockStart: 120_000,
  /** A flow in the browser: each of its actions has Playwright's own budget (test/support/e2e.ts); this catches a flow that never ends. */
  browserFlow: 300_000,
} as const;

/** What a test does besides its heavy steps, in its own process: requests, queries, a few hashes. */
const OWN_WORK_MS = 30_000;

/** The timeout of a test taking these heavy steps (how many of each). */
export function budget(steps: Partial<Record<keyof typeof BUDGET_MS, number>>): number {
  return Object.entries(steps).reduce((sum, [step, count]) => sum + BUDGET_MS[step as keyof typeof BUDGET_MS] * (count ?? 0), OWN_WORK_MS);
}
