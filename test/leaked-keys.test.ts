// POST /api-keys/leaked as a secret-scanning partner and as an attacker would call it: a signed
// report revokes every key in force whose current secret it names, at once, journalled with the
// reporter and the URL, and stops a rotated key's previous secret named in its grace period;
// a forged, re-signed or replayed report changes nothing; unknown, malformed and revoked tokens
// get the same answer. And the key format's published regular expression finds real keys.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, spec, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { makeApiKey } from './support/access-fixtures.js';
import { leakReporter, reportOf, type LeakReporter } from './support/leak-reporter.js';
import { digestTables } from './support/table-digest.js';
import { OPERATOR } from '../src/auth/authority.js';
import { generateSecret } from '../src/auth/secrets/secrets.js';
import { API_KEY_PATTERN } from '../src/api-keys/secret.js';

let database: TestDatabase;
let reporter: LeakReporter;
beforeAll(async () => {
  database = await createTestDatabase();
  reporter = leakReporter();
});
afterAll(() => database.destroy());

const app = () => createTestApp(database.db, { env: { LEAK_REPORT_KEYS_FILE: reporter.keysFile } }).app;
const send = (body: string, headers: Record<string, string>) => {
  let req = request(app()).post('/api-keys/leaked');
  for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
  return req.send(body);
};
const signed = (body: string, signer: LeakReporter = reporter) => send(body, reporter.request(body, signer).headers);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const works = async (secret: string) => (await request(app()).get('/users?limit=1').set('x-api-key', secret)).status === 200;

describe('a signed leak report', () => {
  it('revokes every key in force it names at once, answers per token by its hash, and journals the reporter and the URL', async () => {
    const first = await makeApiKey(database.db, ['users.list']);
    const second = await makeApiKey(database.db, ['users.list']);
    const bystander = await makeApiKey(database.db, ['users.list']);
    const tokens = [first.secret, 'bok_not-a-key', generateSecret('bok'), second.secret, first.secret];
    const body = reportOf(tokens);
    const res = await signed(body);
    expect(res.status).toBe(200);
    expectContractResponse(res, 'POST', '/api-keys/leaked');
    expect(res.body).toEqual(
      tokens.map((token, i) => ({ token_hash: sha256(token), token_type: 'backoffice_api_key', label: [0, 3, 4].includes(i) ? 'true_positive' : 'false_positive' })),
    );
    expect(res.text).not.toContain(first.secret);
    expect(await works(first.secret)).toBe(false);
    expect(await works(second.secret)).toBe(false);
    expect(await works(bystander.secret)).toBe(true);
    const events = await sql<{ target_id: string; actor_type: string; details: Record<string, unknown> }>`
      select target_id, actor_type, details from security_events where type = 'api_key_leak_reported' and target_id in (${first.id}, ${second.id})`.execute(database.db);
    expect(events.rows).toHaveLength(2);
    for (const event of events.rows) {
      expect(event.actor_type).toBe('anonymous');
      expect(event.details).toEqual({ reporter: 'GitHub secret scanning', reporter_key: reporter.keyId, url: 'https://github.com/octocat/Hello-World/blob/main/.env', source: 'content', leaked: 'current' });
    }
  });

  it('stops at once the previous secret of a rotated key, reported in its grace period, and leaves the key and its new secret in force', async () => {
    const key = await makeApiKey(database.db, ['users.list']);
    const rotation = key.service.draftRotation(OPERATOR, key.id, 3600);
    const { secret: current } = await database.db.transaction().execute((trx) => key.service.rotate(trx, OPERATOR, rotation));
    expect(await works(key.secret)).toBe(true);
    const body = reportOf([key.secret]);
    expect((await signed(body)).body[0].label).toBe('true_positive');
    expect(await works(key.secret)).toBe(false);
    expect(await works(current)).toBe(true);
    const events = await sql<{ details: Record<string, unknown>; changes: Record<string, Record<string, unknown>> }>`
      select details, changes from security_events where type = 'api_key_leak_reported' and target_id = ${key.id}`.execute(database.db);
    expect(events.rows).toHaveLength(1);
    expect(events.rows[0]!.details).toMatchObject({ reporter: 'GitHub secret scanning', leaked: 'previous' });
    expect(events.rows[0]!.changes.after).toHaveProperty('previous_secret_retires_at');
    const revokedAt = await database.db.selectFrom('api_keys').select('revoked_at').where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(revokedAt.revoked_at).toBeNull();
    // Sent again, it names a secret no longer in force: nothing changes.
    expect((await signed(body)).body[0].label).toBe('false_positive');
    expect(await works(current)).toBe(true);
  });

  it('revokes a rotated key when its new secret is reported, with or without the previous one', async () => {
    for (const withPrevious of [false, true]) {
      const key = await makeApiKey(database.db, ['users.list']);
      const rotation = key.service.draftRotation(OPERATOR, key.id, 3600);
      const { secret: current } = await database.db.transaction().execute((trx) => key.service.rotate(trx, OPERATOR, rotation));
      const res = await signed(reportOf(withPrevious ? [key.secret, current] : [current]));
      expect(res.body.map((answer: { label: string }) => answer.label)).toEqual(withPrevious ? ['true_positive', 'true_positive'] : ['true_positive']);
      expect(await works(current)).toBe(false);
      expect(await works(key.secret)).toBe(false);
      const events = await sql<{ details: Record<string, unknown> }>`select details from security_events where type = 'api_key_leak_reported' and target_id = ${key.id}`.execute(database.db);
      expect(events.rows.map((e) => e.details.leaked)).toEqual(['current']);
    }
  });
});

describe('attacks on the leak report endpoint', () => {
  const tables = ['api_keys', 'security_events'];

  it('a forged report (a wrong signature, another key\'s, an unknown key id, a body changed after signing) is 401 invalid_signature, an unsigned one 400, and none changes anything', async () => {
    const victim = await makeApiKey(database.db, ['users.list']);
    const body = reportOf([victim.secret]);
    const before = await digestTables(database.db, tables);
    const unsigned = await send(body, { 'content-type': 'application/json' });
    expect(unsigned.status).toBe(400);
    expectContractResponse(unsigned, 'POST', '/api-keys/leaked');
    const attempts = [
      send(body, { ...reporter.request(body).headers, 'github-public-key-signature': 'MEUCIQDKZokqnCjrRtw0tni+2Ltvl/uiMJ1EGumEsp1BsNr32AIgQY1YXD2nlj+XNfGK4rBfkMJ1JDOQcYXxa2sY8FNkrKc=' }),
      signed(body, leakReporter()),
      send(body, { ...reporter.request(body).headers, 'github-public-key-identifier': 'someone-else' }),
      send(reportOf([victim.secret, generateSecret('bok')]), reporter.request(body).headers),
      send(` ${body}`, reporter.request(body).headers),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('invalid_signature');
      expectContractResponse(res, 'POST', '/api-keys/leaked');
    }
    expect(await digestTables(database.db, tables)).toEqual(before);
    expect(await works(victim.secret)).toBe(true);
  });

  it('a replayed report changes nothing and answers false_positive for the keys it already revoked', async () => {
    const key = await makeApiKey(database.db, ['users.list']);
    const body = reportOf([key.secret]);
    expect((await signed(body)).body[0].label).toBe('true_positive');
    const before = await digestTables(database.db, tables);
    const replay = await signed(body);
    expect(replay.status).toBe(200);
    expect(replay.body[0].label).toBe('false_positive');
    expect(await digestTables(database.db, tables)).toEqual(before);
  });

  it('refuses every report when the deployment trusts no reporter key', async () => {
    const key = await makeApiKey(database.db, ['users.list']);
    const body = reportOf([key.secret]);
    const res = await request(createTestApp(database.db).app).post('/api-keys/leaked').set(reporter.request(body).headers).send(body);
    expect(res.status).toBe(401);
    expect(await works(key.secret)).toBe(true);
  });
});

describe('the key format, as registered with a partner', () => {
  it('is the regular expression the contract publishes, and it finds keys in text and nothing longer', () => {
    const description = (spec.paths['/api-keys/leaked'] as { post: { description: string } }).post.description;
    expect(description).toContain(`\`${API_KEY_PATTERN.source}\``);
    const secret = generateSecret('bok');
    expect(`API_KEY=${secret}\n`.match(API_KEY_PATTERN)?.[0]).toBe(secret);
    expect(API_KEY_PATTERN.test(`${secret}x`)).toBe(false);
    expect(API_KEY_PATTERN.test(generateSecret('boa'))).toBe(false);
  });
});
