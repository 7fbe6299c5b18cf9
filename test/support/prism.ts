// The real Prism (@stoplight/prism-cli), as frontend teams and partners run it: the mock of the
// contract (scripts/mock.sh, what `make mock` runs: one process serving every key style, see
// scripts/mock-server.ts) or a validation proxy in front of a server.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT, bundlePath } from '../../src/paths.js';
import type { Inflection } from '../../src/contract/inflection.js';
import { onAFreePort, PortTaken } from './server-process.js';
import { BUDGET_MS } from './budgets.js';

export interface PrismProcess {
  url: string;
  child: ChildProcess;
  /** Everything Prism printed (its log names every violation). */
  output(): string;
  stop(): Promise<void>;
}

async function start(command: string, args: string[], port: number, listening: string): Promise<PrismProcess> {
  const child = spawn(command, args, { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prism did not start within ${BUDGET_MS.mockStart / 1000} s: ${output}`)), BUDGET_MS.mockStart);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(listening)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(output.includes('EADDRINUSE') ? new PortTaken(output) : new Error(`Prism exited with ${code}: ${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `make mock STYLE=<style>`: the mock, answering `style` to requests without x-api-inflection, through the same script. */
export function startMock(style: Inflection): Promise<PrismProcess> {
  return onAFreePort((port) => start(join(PROJECT_ROOT, 'scripts/mock.sh'), [style, String(port)], port, 'Mock listening on'));
}

/** `prism proxy --errors` with that style's contract in front of `upstream`: violations fail the request. */
export function startValidationProxy(style: Inflection, upstream: string): Promise<PrismProcess> {
  return onAFreePort((port) => start(join(PROJECT_ROOT, 'node_modules/.bin/prism'), ['proxy', bundlePath(style), upstream, '--errors', '--host', '127.0.0.1', '--port', String(port)], port, 'Prism is listening'));
}
