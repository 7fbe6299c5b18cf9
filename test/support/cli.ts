// The `backoffice` command line run as an operator runs it: a child process on a test database.
// A run's time depends on how busy the machine is (starting Node, loading the TypeScript sources,
// opening the database), so each run has a budget of its own (BUDGET_MS.cliRun), which only stops a
// run that hangs, and a test that runs several takes one budget per run (`budget({ cliRun: n })`).
import { execFile } from 'node:child_process';
import { BUDGET_MS } from './budgets.js';

const CLI_RUN_BUDGET_MS = BUDGET_MS.cliRun;

export interface CliResult {
  /** The exit code (null when killed by a signal). */
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `backoffice <args>` on `databaseUrl` with `input` on its standard input; never rejects on a non-zero exit. */
export function runCli(args: readonly string[], options: { databaseUrl: string; input?: string; env?: Record<string, string> }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args],
      { env: { ...process.env, DATABASE_URL: options.databaseUrl, ...options.env }, timeout: CLI_RUN_BUDGET_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error?.killed) {
          reject(new Error(`backoffice ${args.join(' ')} did not finish within ${CLI_RUN_BUDGET_MS / 1000} s (hung?); stderr: ${stderr}`));
          return;
        }
        const code = (error as { code?: unknown } | null)?.code;
        resolve({ status: error ? (typeof code === 'number' ? code : null) : 0, stdout, stderr });
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}
