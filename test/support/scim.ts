// What the SCIM tests (test/scim.test.ts for Users, test/scim-groups.test.ts for Groups) share: the
// service on its own throwaway database with a directory's provisioning key, a SCIM request as a
// directory sends it, the SCIM error's shape, the proof that nothing was written, and the means to
// park a request on a lock held by the test.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import request from 'supertest';
import pg from 'pg';
import { createTestApp, createTestDatabase, type TestDatabase } from './context.js';
import { expectContractResponse } from './contract.js';
import { makeApiKey, makeRole, makeUser } from './access-fixtures.js';
import { ApiKeyService } from '../../src/api-keys/service.js';
import type { Authority } from '../../src/auth/authority.js';
import { changedTables, digestTables, tableNames } from './table-digest.js';
import { systemClock } from '../../src/clock.js';

export type App = ReturnType<typeof createTestApp>['app'];

export const SCIM = 'application/scim+json';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

export interface ScimService {
  database: TestDatabase;
  app: App;
  /** The provisioning key, holding scim.provision only (what an operator gives Entra ID or Okta). */
  key: string;
}

/** Starts the service on a database of its own before the file's tests (handing it to `use`), and drops the database after them. */
export function useScimService(use: (started: ScimService) => void): void {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    const { app } = createTestApp(database.db, { clock: systemClock });
    const key = (await makeApiKey(database.db, ['scim.provision'], { name: 'Entra ID provisioning' })).secret;
    use({ database, app, key });
  });
  afterAll(async () => {
    await database?.destroy();
  });
}

/**
 * A provisioning key made by a person allowed to provision (a role holding scim.provision and
 * api_keys.manage): a person's key, never worth more than its creator now. Returns the creator,
 * their role, and the key.
 */
export async function keyOfAPerson(database: TestDatabase) {
  const role = await makeRole(database.db, ['scim.provision', 'api_keys.manage']);
  const creator = await makeUser(database.db, { roleIds: [role.id] });
  const keys = new ApiKeyService({ db: database.db, clock: systemClock });
  const by: Authority = { kind: 'user', userId: creator.id, sessionId: randomUUID(), permissions: new Set(['scim.provision', 'api_keys.manage']) };
  const draft = keys.draft(by, { name: `directory-${randomUUID().slice(0, 8)}`, permissions: ['scim.provision'] });
  const { key, secret } = await database.db.transaction().execute((trx) => keys.create(trx, by, draft));
  return { creator, role, keyId: key.id, secret };
}

/** A SCIM request as a directory sends it: the credential (a key as a bearer token), SCIM's media type; its answer must be the contract's. */
export function scimRequest(app: App, method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, body: object | undefined, credential: Record<string, string>) {
  let req = request(app)[method](path).set(credential).set('accept', SCIM);
  if (body !== undefined) req = req.set('content-type', SCIM).send(JSON.stringify(body));
  return req.then((res) => {
    expectContractResponse(res, method, path.split('?')[0]!);
    return res;
  });
}

/** Runs `attempt` and proves it changed no table (but those a refused request writes on purpose, test/support/table-digest.ts). */
export async function nothingWritten(database: TestDatabase, attempt: () => Promise<unknown>) {
  const tables = await tableNames(database.db);
  const before = await digestTables(database.db, tables);
  await attempt();
  expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
}

export function expectScimError(res: request.Response, status: number, scimType?: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
  expect(res.body.schemas).toEqual([ERROR]);
  expect(res.body.status).toBe(String(status));
  if (scimType) expect(res.body.scimType).toBe(scimType);
}

/** A connection of the test's own, outside the service's pool: an administrator's transaction holding locks. */
export async function otherConnection(database: TestDatabase) {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return client;
}

/** Until some statement in this database waits on a lock (or `done` settles first): true when one waited. */
export async function waitsOnALock(database: TestDatabase, done: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void done.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (;;) {
    if (settled) return false;
    const { rows } = await database.pool.query<{ n: string }>(
      "select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
    );
    if (Number(rows[0]!.n) > 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
