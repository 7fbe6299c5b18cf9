// docs/PARTNERS.md, followed as written: every block of it run, in order, by a partner with an
// empty folder. The package is packed with `npm pack`, installed from the tarball without a
// registry (npm offline: its dependencies are bundled in it), and used from plain JavaScript and
// from TypeScript (its types checked by tsc) against the real service on PostgreSQL; the mock
// snippet runs against `make mock`'s Prism (test/support/prism.ts).
//
// Two things stand in for what a partner's machine does with a network: the service is the test's
// own (the real app on a socket, WEBHOOKS_ALLOW_PRIVATE_URLS for a receiver on loopback), and
// `npm install --save-dev typescript @types/node` links this repository's copies instead.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync, mkdirSync, symlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { makeUser } from './support/access-fixtures.js';
import { runCli } from './support/cli.js';
import { BUDGET_MS, budget } from './support/budgets.js';
import { deliverDue } from './support/deliveries.js';
import { freePort } from './support/server-process.js';
import { startMock, type PrismProcess } from './support/prism.js';
import { systemClock } from '../src/clock.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { signedHeaders } from '../clients/typescript/src/index.js';

const GUIDE = readFileSync(join(PROJECT_ROOT, 'docs/PARTNERS.md'), 'utf8');
/** Every fenced block of the guide, by the name after its language (```js list-users.mjs). */
const blocks = new Map([...GUIDE.matchAll(/^```(\w+) (\S+)\n([\s\S]*?)^```$/gm)].map((m) => [m[2]!, { lang: m[1]!, code: m[3]! }]));
const block = (name: string) => {
  const found = blocks.get(name);
  if (!found) throw new Error(`docs/PARTNERS.md has no block named ${name}`);
  return found.code;
};
/** The commands of a shell block: continuation lines joined, comments and blank lines dropped. */
const commands = (name: string) =>
  block(name)
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line && !line.startsWith('#'));

let database: TestDatabase;
let services: ReturnType<typeof createTestApp>['services'];
let server: Server;
let baseUrl: string;
let project: string;
let env: Record<string, string>;
let apiKey = '';
let webhookSecret = '';
let receiverPort = 0;
const background: ChildProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const made = createTestApp(database.db, { clock: systemClock, env: { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', WEBHOOKS_TIMEOUT_MS: '3000' } });
  services = made.services;
  server = await new Promise<Server>((resolve) => {
    const s = made.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  project = mkdtempSync(join(tmpdir(), 'partner-'));
  receiverPort = await freePort();
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && !/^npm_/i.test(k))) as Record<string, string>;
  env = {
    ...inherited,
    BACKOFFICE_CHECKOUT: PROJECT_ROOT,
    PARTNER_PROJECT: project,
    // No registry: whatever npm would fetch must already be there (the bundled dependencies).
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    PATH: `${join(project, 'node_modules/.bin')}:${process.env.PATH}`,
  };
});
afterAll(async () => {
  for (const child of background) if (child.pid && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await services?.deliveries.stop();
  await database?.destroy();
  if (project) rmSync(project, { recursive: true, force: true });
});

/** What the guide's placeholders stand for here. */
function substitute(line: string): string {
  return line
    .replaceAll('http://localhost:3000', baseUrl)
    .replaceAll('bok_...the secret...', apiKey)
    .replaceAll('whsec_...the secret...', webhookSecret)
    .replaceAll('localhost:8080', `localhost:${receiverPort}`)
    .replaceAll('PORT=8080', `PORT=${receiverPort}`);
}

function sh(command: string, timeoutMs = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', command], { cwd: project, env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function ok(command: string, timeoutMs?: number) {
  const result = await sh(substitute(command), timeoutMs);
  expect(result.code, `${command}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

function writeBlock(name: string) {
  writeFileSync(join(project, name), block(name));
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('docs/PARTNERS.md, step by step', () => {
  it('runs every block of the guide (none is left out of this test)', () => {
    expect([...blocks.keys()].sort()).toEqual(
      ['create-key.sh', 'env.sh', 'install.sh', 'list-users.mjs', 'run-list-users.sh', 'create-task.mjs', 'run-create-task.sh', 'subscribe.mjs', 'receiver.mjs', 'run-receiver.sh', 'feed.ts', 'setup-typescript.sh', 'tsconfig.json', 'run-feed.sh', 'mock.mjs', 'run-mock.sh'].sort(),
    );
  });

  it('1. a key from the command line, and the environment', async () => {
    const [command, ...rest] = commands('create-key.sh');
    expect(rest).toEqual([]);
    const args = command!.split(/\s+/);
    expect(args.shift()).toBe('backoffice');
    const result = await runCli(args, { databaseUrl: database.url });
    expect(result.status, result.stderr).toBe(0);
    apiKey = result.stdout.trim();
    expect(apiKey).toMatch(/^bok_/);
    for (const line of commands('env.sh')) {
      const [, name, value] = /^export (\w+)=(.*)$/.exec(substitute(line))!;
      env[name!] = value!;
    }
    expect(env.BACKOFFICE_URL).toBe(baseUrl);
    expect(env.BACKOFFICE_API_KEY).toBe(apiKey);
  }, 60_000);

  it('2. the package, packed and installed from the tarball with no registry', async () => {
    for (const line of commands('install.sh')) await ok(line, 180_000);
    const installed = join(project, 'node_modules/@backoffice/client');
    expect(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).name).toBe('@backoffice/client');
    // Its dependencies came inside the tarball.
    expect(existsSync(join(installed, 'node_modules/openapi-fetch/dist/index.mjs')) || existsSync(join(project, 'node_modules/openapi-fetch/dist/index.mjs'))).toBe(true);
    expect(existsSync(join(installed, 'dist/contract/camel.d.ts'))).toBe(true);
  }, 240_000);

  it('3. lists users (plain JavaScript)', async () => {
    const { email } = await makeUser(database.db, { email: `grace-${Date.now()}@example.com` });
    writeBlock('list-users.mjs');
    const [run] = commands('run-list-users.sh');
    const out = await ok(run!);
    expect(out).toContain(`${email} Test User active`);
  }, 60_000);

  it('4. creates a task safely, then changes it with the ETag it got', async () => {
    writeBlock('create-task.mjs');
    const [run] = commands('run-create-task.sh');
    const out = await ok(run!);
    expect(out).toMatch(/^created [0-9a-f-]{36} todo\nnow done\n$/);
    const id = /^created (\S+)/.exec(out)![1]!;
    const row = await database.db.selectFrom('tasks').select(['title', 'priority', 'status']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toEqual({ title: 'Call back the Lyon office', priority: 'high', status: 'done' });
  }, 60_000);

  it('5. subscribes, receives a webhook and verifies it; a forged or tampered one is refused', async () => {
    writeBlock('subscribe.mjs');
    writeBlock('receiver.mjs');
    const [subscribe, receive, create, ...rest] = commands('run-receiver.sh');
    expect(rest).toEqual([]);
    webhookSecret = (await ok(subscribe!)).trim();
    expect(webhookSecret).toMatch(/^whsec_/);
    expect(receive).toMatch(/&$/);
    const child = spawn('bash', ['-c', substitute(receive!.replace(/&$/, ''))], { cwd: project, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    background.push(child);
    let printed = '';
    child.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const receiverUrl = `http://127.0.0.1:${receiverPort}/hooks`;
    await until('the receiver to listen', () => fetch(receiverUrl, { method: 'POST' }).then((r) => r.status, () => undefined), BUDGET_MS.serverStart).catch((error: Error) => {
      throw new Error(`${error.message}: ${printed}`);
    });

    await ok(create!);
    await until('the delivery', async () => {
      await deliverDue(services.deliveries, database.db);
      return printed.includes('task.created Call back the Lyon office') ? true : undefined;
    }, 60_000);
    const deliveries = (await sql<{ status: string }>`select status from webhook_deliveries`.execute(database.db)).rows;
    expect(deliveries.map((d) => d.status)).toContain('succeeded');

    const body = JSON.stringify({ id: crypto.randomUUID(), type: 'task.created', occurredAt: new Date().toISOString(), data: { title: 'forged' } });
    const forged = await fetch(receiverUrl, { method: 'POST', body, headers: await signedHeaders(`whsec_${Buffer.alloc(32, 9).toString('base64')}`, 'msg_forged', body) });
    expect([forged.status, await forged.text()]).toEqual([400, 'no_matching_signature']);
    const headers = await signedHeaders(webhookSecret, 'msg_tampered', body);
    const tampered = await fetch(receiverUrl, { method: 'POST', body: body.replace('forged', 'tampered'), headers });
    expect([tampered.status, await tampered.text()]).toEqual([400, 'no_matching_signature']);
    const genuine = await fetch(receiverUrl, { method: 'POST', body, headers });
    expect(genuine.status).toBe(204);
    const old = await fetch(receiverUrl, { method: 'POST', body, headers: await signedHeaders(webhookSecret, 'msg_old', body, Math.floor(Date.now() / 1000) - 3600) });
    expect([old.status, await old.text()]).toEqual([400, 'timestamp_too_old']);
  }, budget({ cliRun: 2, serverStart: 1 }));

  it('6. TypeScript: the feed from a stored cursor, its types checked by tsc (and a wrong field refused by them)', async () => {
    writeBlock('feed.ts');
    writeBlock('tsconfig.json');
    const [installDev, setType, ...rest] = commands('setup-typescript.sh');
    expect(rest).toEqual([]);
    // Stands in for `npm install --save-dev typescript @types/node` (no registry here): this repository's copies.
    expect(installDev).toBe('npm install --save-dev typescript @types/node');
    mkdirSync(join(project, 'node_modules/@types'), { recursive: true });
    mkdirSync(join(project, 'node_modules/.bin'), { recursive: true });
    symlinkSync(join(PROJECT_ROOT, 'node_modules/typescript'), join(project, 'node_modules/typescript'));
    symlinkSync(join(PROJECT_ROOT, 'node_modules/@types/node'), join(project, 'node_modules/@types/node'));
    symlinkSync(join(PROJECT_ROOT, 'node_modules/typescript/bin/tsc'), join(project, 'node_modules/.bin/tsc'));
    await ok(setType!);

    const [run] = commands('run-feed.sh');
    // The feed shows an event once every transaction older than it has ended, in the whole cluster.
    let text = await ok(run!, 180_000); // compiled once; then run again until the event shows
    const out = await until('the events in the feed', async () => {
      if (!text.includes('Call back the Lyon office')) text += await ok('node feed.js');
      return text.includes('Call back the Lyon office') ? text : undefined;
    }, 60_000);
    expect(out).toMatch(/^\S+ Call back the Lyon office by partner-quickstart$/m);
    expect(existsSync(join(project, 'feed-cursor.txt'))).toBe(true);
    expect(await ok('node feed.js')).toBe(''); // resumed from the stored cursor: nothing new

    // The types are the contract's: a misspelt field of a create does not compile.
    writeFileSync(join(project, 'wrong.ts'), `import { createClient } from '@backoffice/client';\nconst b = createClient({ baseUrl: 'http://x' });\nawait b.POST('/tasks', { body: { titel: 'x' } });\n`);
    const wrong = await sh('npx tsc --noEmit --module NodeNext --target ES2022 --strict --types node wrong.ts');
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout).toContain('titel');
  }, 300_000);

  it('the mock: the same code against make mock (Prism)', async () => {
    let mock: PrismProcess | undefined;
    try {
      mock = await startMock('snake');
      env.MOCK_URL = mock.url;
      writeBlock('mock.mjs');
      const [run] = commands('run-mock.sh');
      const out = await ok(run!);
      expect(out).toMatch(/^\S+@\S+ \S+\n$/);
    } finally {
      delete env.MOCK_URL;
      await mock?.stop();
    }
  }, 120_000);
});
