// The secrets scan: representative flows run through real server processes (debug logging) behind
// nginx, every secret they issue or send is collected (passwords, access and refresh tokens, API
// keys), and afterwards a pg_dump of the database and every line the processes printed are
// searched for each of them in clear. Secrets are also sent where they do not belong (query
// strings, the wrong header, malformed and refused bodies), where a careless log would catch them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from './support/context.js';
import type { ServerProcess } from './support/server-process.js';
import { startBalancedService, type BalancedService } from './support/balanced-service.js';
import { HttpClient, type RawRequest, type RawResponse } from './support/http-client.js';
import { createUser } from './support/sessions.js';
import { makeApiKey } from './support/access-fixtures.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { dumpDatabase, secretsIn } from './support/secret-scan.js';
import { answersOnceHeard } from './support/key-cache.js';

const PROCESSES = 3;

let service: BalancedService;
let database: TestDatabase;
let servers: ServerProcess[] = [];
let client: HttpClient;
let direct: HttpClient[] = [];

/** Every secret the flows issued or sent, with what it is (for the failure message). */
const secrets = new Map<string, string>();
const keep = (value: string | undefined, what: string) => {
  if (value) secrets.set(value, what);
};
const requestIds: string[] = [];
let sent = 0;

beforeAll(async () => {
  service = await startBalancedService(PROCESSES, { LOG_LEVEL: 'debug' });
  ({ database, servers, client, direct } = service);
}, 120_000);

afterAll(() => service?.stop());

const json = { 'content-type': 'application/json' };

/** Sends through nginx (or to one process), keeping the request id answered to prove the logs hold the request. */
async function send(req: RawRequest, via: HttpClient = client): Promise<RawResponse> {
  const res = await via.send({ ...req, headers: { ...req.headers, 'x-request-id': `scan-${++sent}` } });
  requestIds.push(String(res.headers['x-request-id']));
  if (res.status >= 500) throw new Error(`${req.method} ${req.path} answered ${res.status}: ${res.text}`);
  return res;
}

interface TokenSet {
  access_token: string;
  refresh_token: string;
}
const keepSet = (res: RawResponse, what: string): TokenSet => {
  const set = res.body as TokenSet;
  keep(set.access_token, `${what} access token`);
  keep(set.refresh_token, `${what} refresh token`);
  return set;
};
const signIn = (email: string, password: string) => send({ method: 'POST', path: '/sessions', headers: json, body: JSON.stringify({ session: { email, password } }) });
const bearer = (set: TokenSet) => ({ authorization: `Bearer ${set.access_token}` });
const refresh = (set: TokenSet, via?: HttpClient) =>
  send({ method: 'POST', path: '/tokens', headers: { ...json, ...bearer(set) }, body: JSON.stringify({ refresh_token: set.refresh_token }) }, via);

async function sessionFlows() {
  for (let i = 0; i < 3; i++) {
    const user = await createUser(database.db, { permissions: ['users.list'] });
    keep(user.password, 'password');
    const wrong = `not the password of user ${i}, long enough`;
    keep(wrong, 'wrong password');
    expect((await signIn(user.email, wrong)).status).toBe(401);
    const first = await signIn(user.email, user.password);
    expect(first.status).toBe(201);
    let set = keepSet(first, 'sign-in');
    expect((await send({ method: 'GET', path: '/me', headers: bearer(set) })).status).toBe(200);
    expect((await send({ method: 'GET', path: '/users', headers: { ...bearer(set), 'x-api-inflection': 'camel' } })).status).toBe(200);
    // Refreshes racing over every process, then a replay within the grace window.
    const racing = await Promise.all(direct.map((d) => refresh(set, d)));
    expect(racing.every((r) => r.status === 201)).toBe(true);
    const previous = set;
    set = keepSet(racing[0]!, 'refresh');
    expect((await refresh(previous)).status).toBe(201);
    set = keepSet(await refresh(set), 'second refresh');
    // Secrets where they do not belong.
    await send({ method: 'GET', path: `/users?access_token=${set.access_token}&refresh_token=${set.refresh_token}`, headers: bearer(set) });
    await send({ method: 'GET', path: '/users', headers: { 'x-api-key': set.access_token } });
    await send({ method: 'GET', path: '/users', headers: { authorization: `Bearer ${set.refresh_token}` } });
    await send({ method: 'GET', path: '/users', headers: { ...bearer(set), 'x-api-key': set.refresh_token } });
    await send({ method: 'POST', path: '/tokens', headers: { ...json, ...bearer(set) }, body: `{"refresh_token": "${set.refresh_token}"` });
    await send({ method: 'POST', path: '/tokens', headers: { ...json, ...bearer(set) }, body: JSON.stringify({ refresh_token: set.refresh_token, password: user.password }) });
    await send({ method: 'POST', path: '/sessions', headers: { 'content-type': 'text/plain' }, body: `${user.email}:${user.password}` });
    await send({ method: 'POST', path: '/sessions', headers: json, body: JSON.stringify({ session: { email: user.email, password: user.password, access_token: set.access_token } }) });
    await send({ method: 'POST', path: '/sessions', headers: json, body: `{"session":{"email":"${user.email}","password":"${user.password}"` });
    if (i === 0) {
      const next = `a brand new password for user ${i}`;
      keep(next, 'new password');
      const changed = await send({ method: 'PUT', path: '/me/password', headers: { ...json, ...bearer(set) }, body: JSON.stringify({ current_password: user.password, new_password: next }) });
      expect(changed.status).toBe(204);
      keepSet(await signIn(user.email, next), 'sign-in with the new password');
    }
    expect((await send({ method: 'DELETE', path: '/sessions/current', headers: bearer(set) })).status).toBe(204);
    expect((await refresh(set)).status).toBe(401);
  }
}

async function apiKeyFlows() {
  const admin = await createUser(database.db, { permissions: [...PERMISSIONS] });
  keep(admin.password, 'admin password');
  const set = keepSet(await signIn(admin.email, admin.password), 'admin sign-in');
  // Creating and rotating keys are sensitive changes: a fresh proof first (the password travels once more).
  expect((await send({ method: 'POST', path: '/sessions/current/step-up', headers: { ...json, ...bearer(set) }, body: JSON.stringify({ password: admin.password }) })).status).toBe(200);
  const operatorKey = await makeApiKey(database.db, ['users.list']);
  keep(operatorKey.secret, 'API key from the command line code');
  expect((await send({ method: 'GET', path: '/users', headers: { 'x-api-key': operatorKey.secret } })).status).toBe(200);
  for (let i = 0; i < 3; i++) {
    const created = await send({ method: 'POST', path: '/api-keys', headers: { ...json, ...bearer(set) }, body: JSON.stringify({ name: `scan key ${i}`, permissions: ['users.list', 'users.read'] }) });
    expect(created.status).toBe(201);
    const { api_key: key, secret } = created.body as { api_key: { id: string }; secret: string };
    keep(secret, 'created API key');
    for (const d of direct) expect((await send({ method: 'GET', path: '/utilisateurs', headers: { 'x-api-key': secret, 'x-api-inflection': 'camel' } }, d)).status).toBe(200);
    const rotated = await send({ method: 'POST', path: `/api-keys/${key.id}/rotate`, headers: { ...json, ...bearer(set) }, body: JSON.stringify({ grace_period_seconds: 600 }) });
    expect(rotated.status).toBe(200);
    const next = (rotated.body as { secret: string }).secret;
    keep(next, 'rotated API key');
    expect((await send({ method: 'GET', path: '/users', headers: { 'x-api-key': secret } })).status).toBe(200);
    expect((await send({ method: 'GET', path: '/users', headers: { 'x-api-key': next } })).status).toBe(200);
    // Misplaced: in a query string, as a bearer token, in a refused body.
    await send({ method: 'GET', path: `/users?api_key=${next}`, headers: { 'x-api-key': next } });
    await send({ method: 'GET', path: '/users', headers: { authorization: `Bearer ${next}` } });
    await send({ method: 'PATCH', path: `/api-keys/${key.id}`, headers: { ...json, ...bearer(set) }, body: JSON.stringify({ name: next, secret: next }) });
    expect((await send({ method: 'GET', path: '/users', headers: { 'x-api-key': next } })).status).toBe(200);
    expect((await send({ method: 'DELETE', path: `/api-keys/${key.id}`, headers: bearer(set) })).status).toBe(204);
    // Every process refuses it once it has heard the revocation (docs/PARTNER-KEYS.md, "Keys in memory").
    await answersOnceHeard(() => send({ method: 'GET', path: '/users', headers: { 'x-api-key': next } }), 401);
  }
}

describe('the secrets scan', () => {
  it('finds none of the issued passwords, tokens or API keys in a database dump or in any log line', { timeout: 300_000 }, async () => {
    await sessionFlows();
    await apiKeyFlows();
    // Let the unawaited last-used writes land, then stop the processes so every log line is out.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await service.nginx.stop();
    const codes = await Promise.all(servers.map((s) => s.stop()));
    expect(codes).toEqual(servers.map(() => 0));
    const logs = servers.map((s) => s.output()).join('\n');

    const dump = dumpDatabase(database.url);

    // The scan would see a leak: the dump holds the data, the logs hold every request.
    const emails = await database.db.selectFrom('users').select('email').execute();
    for (const { email } of emails) expect(dump).toContain(email);
    expect(dump).toMatch(/COPY public\.session_tokens/);
    for (const id of requestIds) expect(logs, `request ${id} logged`).toContain(`"${id}"`);

    expect(secretsIn(dump, secrets), 'secrets in the database dump').toEqual([]);
    expect(secretsIn(logs, secrets), 'secrets in the log lines').toEqual([]);

    process.stdout.write(
      `secrets scan figures ${JSON.stringify({
        secrets: secrets.size,
        byKind: [...secrets.values()].reduce<Record<string, number>>((acc, what) => ({ ...acc, [what]: (acc[what] ?? 0) + 1 }), {}),
        requests: requestIds.length,
        logLines: logs.split('\n').filter(Boolean).length,
        dumpBytes: dump.length,
      })}\n`,
    );
  });
});
