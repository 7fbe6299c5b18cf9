// Standard output is written in blocks (src/logger.ts, bufferedStdout), not a write per line: a
// line must still reach the reader on its own while the process runs on, and what is buffered must
// be written however the process ends (process.exit, an uncaught exception).
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../src/paths.js';
import { BUDGET_MS, budget } from './support/budgets.js';

/** Runs `body` in a Node process whose logger writes to bufferedStdout; its output and exit as they come. */
function run(body: string) {
  const logger = pathToFileURL(join(PROJECT_ROOT, 'src/logger.ts')).href;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `import { bufferedStdout, createLogger, STDOUT_FLUSH_MS } from '${logger}';\nconst log = createLogger('info', bufferedStdout());\n${body}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve((code = c))));
  return { child, output: () => output, exited, running: () => code === undefined };
}

describe('standard output, written in blocks', () => {
  it('a single line reaches the reader while the process runs on (no later line pushes it out)', { timeout: budget({ serverStart: 1 }) }, async () => {
    const proc = run(`log.info('the only line'); setTimeout(() => {}, 120_000);`);
    try {
      await expect.poll(proc.output, { timeout: BUDGET_MS.serverStart, interval: 50 }).toContain('the only line');
      expect(proc.running()).toBe(true);
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  it('every buffered line is written when the process exits at once (process.exit) or dies of an uncaught exception', { timeout: budget({ serverStart: 2 }) }, async () => {
    for (const end of ['process.exit(3);', "throw new Error('boom');"]) {
      const proc = run(`for (let i = 0; i < 50; i++) log.info({ i }, 'line ' + i);\n${end}`);
      expect(await proc.exited).not.toBe(0);
      const lines = proc.output().split('\n').filter((l) => l.startsWith('{'));
      expect(lines.map((l) => (JSON.parse(l) as { i: number }).i)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    }
  });

  it('nobody reads standard output any more (a log shipper stopped by the same SIGTERM): the service still exits, its last lines dropped, instead of retrying the write forever', { timeout: budget({ serverStart: 2 }) }, async () => {
    // The exit comes before the first periodic flush (which would have met the error first).
    const proc = run(`setTimeout(() => { log.info('the shutdown line'); process.exit(0); }, STDOUT_FLUSH_MS / 4);`);
    // The reader goes away before the line is written: every write of it now fails with EPIPE.
    proc.child.stdout.destroy();
    const exited = await Promise.race([proc.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), BUDGET_MS.serverStart))]);
    proc.child.kill('SIGKILL');
    expect(exited).toBe(0);
  });

  it('several processes sharing one pipe (WORKERS > 1) under a flood of long lines: every write(2) is whole lines of at most PIPE_BUF bytes, so none cuts into another', { timeout: budget({ serverStart: 1 }) }, async () => {
    // Records every write to standard output (sonic-boom writes through fs.writeSync).
    const proc = run(`
      import('node:fs').then(({ default: fs }) => {
        const writes = [];
        const writeSync = fs.writeSync;
        fs.writeSync = (fd, data, ...rest) => {
          if (fd === 1) writes.push(Buffer.byteLength(String(data)) + (String(data).endsWith('\\n') ? 'whole' : 'cut'));
          return writeSync.call(fs, fd, data, ...rest);
        };
        for (let i = 0; i < 500; i++) log.info({ path: '/' + 'x'.repeat(i % 700) }, 'request completed');
        log.flush();
        process.stderr.write('WRITES ' + JSON.stringify(writes) + '\\n');
      });
    `);
    await proc.exited;
    const writes = JSON.parse(/WRITES (.*)/.exec(proc.output())![1]!) as string[];
    expect(writes.length).toBeGreaterThan(10);
    for (const w of writes) {
      expect(w.endsWith('whole')).toBe(true);
      expect(Number.parseInt(w, 10)).toBeLessThanOrEqual(4096);
    }
  });
});

describe('standard output redirected to a file', () => {
  it('an operator running `npm start > service.log`: the lines reach the file, and the process never asks the disk to sync it (each fsync would stop the event loop until the disk answers, ten times a second)', { timeout: budget({ serverStart: 1 }) }, async () => {
    const directory = mkdtempSync(join(tmpdir(), 'stdout-file-'));
    const file = join(directory, 'service.log');
    const fd = openSync(file, 'w');
    const logger = pathToFileURL(join(PROJECT_ROOT, 'src/logger.ts')).href;
    // Counts every fsync of standard output (sonic-boom calls fs.fsyncSync and fs.fsync) while
    // lines are logged over several flush periods; the count is read before the process exits.
    const body = `
      import fs from 'node:fs';
      import { bufferedStdout, createLogger, STDOUT_FLUSH_MS } from '${logger}';
      let syncs = 0;
      const fsyncSync = fs.fsyncSync, fsync = fs.fsync;
      fs.fsyncSync = (fd, ...rest) => { if (fd === 1) syncs++; return fsyncSync.call(fs, fd, ...rest); };
      fs.fsync = (fd, ...rest) => { if (fd === 1) syncs++; return fsync.call(fs, fd, ...rest); };
      const log = createLogger('info', bufferedStdout());
      let i = 0;
      const timer = setInterval(() => log.info({ i: i++ }, 'request completed'), STDOUT_FLUSH_MS / 4);
      setTimeout(() => { clearInterval(timer); setTimeout(() => { process.stderr.write('FSYNCS ' + syncs + ' LINES ' + i + '\\n'); setTimeout(() => {}, 60_000); }, STDOUT_FLUSH_MS * 2); }, STDOUT_FLUSH_MS * 6);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', body], { stdio: ['ignore', fd, 'pipe'] });
    closeSync(fd);
    let errors = '';
    child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    try {
      await expect.poll(() => errors, { timeout: BUDGET_MS.serverStart, interval: 50 }).toMatch(/FSYNCS \d+ LINES \d+/);
      const [, fsyncs, lines] = /FSYNCS (\d+) LINES (\d+)/.exec(errors)!;
      expect(Number(lines)).toBeGreaterThan(10);
      // Every line logged is in the file while the process still runs (flushed within the period).
      const written = readFileSync(file, 'utf8').split('\n').filter((l) => l.startsWith('{'));
      expect(written).toHaveLength(Number(lines));
      expect(Number(fsyncs)).toBe(0);
    } finally {
      child.kill('SIGKILL');
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
