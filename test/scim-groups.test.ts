// SCIM 2.0 Groups (docs/IDENTITY.md, "Groups are roles") on the real service and real
// PostgreSQL: the group sequences Microsoft Entra ID's and Okta's SCIM validators send, replayed
// request by request; and the attacks on the rule that no caller gives or takes a right it does
// not hold, named as the attacker would try them. A membership change is a grant or revocation of
// a role: the same checks, audit and public events as an administrator's change of a person's roles.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, type TestDatabase } from './support/context.js';
import { adminRoleId, makeApiKey, makeRole, makeUser } from './support/access-fixtures.js';
import { createUser, signIn } from './support/sessions.js';
import { expectScimError, keyOfAPerson, nothingWritten, otherConnection as connectionOf, PATCH_OP, scimRequest, useScimService, waitsOnALock as waitsIn, type App } from './support/scim.js';
import { systemClock } from '../src/clock.js';
import { PERMISSIONS } from '../src/auth/permissions.js';

const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

let database: TestDatabase;
let app: App;
let key: string;
useScimService((started) => ({ database, app, key } = started));

/** A SCIM request as a directory sends it: the key as a bearer token, SCIM's media type. */
const scim = (method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, body?: object, secret = key, target: App = app) =>
  scimRequest(target, method, path, body, { authorization: `Bearer ${secret}` });

const patch = (...Operations: object[]) => ({ schemas: [PATCH_OP], Operations });
const q = (filter: string) => encodeURIComponent(filter);

const rolesOf = async (userId: string) =>
  (await database.db.selectFrom('user_roles').select('role_id').where('user_id', '=', userId).execute()).map((r) => r.role_id).sort();

const memberIds = (group: { members?: { value: string }[] }) => (group.members ?? []).map((m) => m.value).sort();

describe("Microsoft Entra ID's group sequence", () => {
  it('finds the group by displayName without members, reads it, asks for a member, adds, removes, and is refused a rename', async () => {
    const role = await makeRole(database.db, [], `Support ${randomUUID().slice(0, 8)}`);
    const ada = await makeUser(database.db);
    const bob = await makeUser(database.db);
    // 1. Is the group there? (Entra ID leaves members out.)
    let res = await scim('get', `/scim/v2/Groups?excludedAttributes=members&filter=${q(`displayName eq "${role.name.toUpperCase()}"`)}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ schemas: [LIST], totalResults: 1, itemsPerPage: 1 });
    expect(res.body.Resources[0]).toMatchObject({ schemas: [GROUP], id: role.id, displayName: role.name, meta: { resourceType: 'Group', location: `/scim/v2/Groups/${role.id}` } });
    expect(res.body.Resources[0].members).toBeUndefined();
    // 2. Read it by id, without members.
    res = await scim('get', `/scim/v2/Groups/${role.id}?excludedAttributes=members`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.members).toBeUndefined();
    // 3. Is Ada a member? (Entra ID's filter on id and members.)
    const isMember = async (userId: string) =>
      (await scim('get', `/scim/v2/Groups?excludedAttributes=members&filter=${q(`id eq "${role.id}" and members[value eq "${userId}"]`)}`)).body.totalResults as number;
    expect(await isMember(ada.id)).toBe(0);
    // 4. Add Ada and Bob, as Entra ID sends it ($ref null beside the value).
    res = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'Add', path: 'members', value: [{ $ref: null, value: ada.id }, { $ref: null, value: bob.id }] }));
    expect(res.status, res.text).toBe(200);
    expect(memberIds(res.body)).toEqual([ada.id, bob.id].sort());
    expect(await rolesOf(ada.id)).toEqual([role.id]);
    expect(await isMember(ada.id)).toBe(1);
    // 5. Remove Bob (Entra ID: path members with a value list).
    res = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'Remove', path: 'members', value: [{ $ref: null, value: bob.id }] }));
    expect(res.status, res.text).toBe(200);
    expect(memberIds(res.body)).toEqual([ada.id]);
    expect(await rolesOf(bob.id)).toEqual([]);
    // 6. A rename (Entra ID's "update non-member attributes"): the role's name is the administrators'.
    await nothingWritten(database, async () => {
      expectScimError(await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'Replace', path: 'displayName', value: `${role.name} updated` })), 400, 'mutability');
    });
    // 7. Create and delete are refused: groups are roles, made by administrators.
    await nothingWritten(database, async () => {
      const created = await scim('post', '/scim/v2/Groups', { schemas: [GROUP], displayName: `New ${randomUUID().slice(0, 8)}`, members: [] });
      expectScimError(created, 403);
      expect(created.body.code).toBe('groups_are_roles');
      const deleted = await scim('delete', `/scim/v2/Groups/${role.id}`);
      expectScimError(deleted, 403);
      expect(deleted.body.code).toBe('groups_are_roles');
    });
    // Every change is the same as an administrator's change of roles: user_updated with the roles
    // before and after, as the key, and the public event user.updated for partners.
    const events = await database.db
      .selectFrom('security_events')
      .select(['type', 'actor_type', 'target_id', 'changes'])
      .where('target_id', 'in', [ada.id, bob.id])
      .orderBy('id')
      .execute();
    expect(events.map((e) => [e.type, e.actor_type, e.target_id])).toEqual([
      ['user_updated', 'api_key', ada.id],
      ['user_updated', 'api_key', bob.id],
      ['user_updated', 'api_key', bob.id],
    ]);
    expect(events[0]!.changes).toMatchObject({ before: { roles: [] }, after: { roles: [role.name] } });
    expect(events[2]!.changes).toMatchObject({ before: { roles: [role.name] }, after: { roles: [] } });
    const published = await database.db.selectFrom('events').select(['type', 'payload']).where('type', '=', 'user.updated').execute();
    const aboutAda = published.filter((e) => (e.payload as { data?: { id?: string } }).data?.id === ada.id);
    expect(aboutAda).toHaveLength(1);
    expect(aboutAda[0]!.payload).toMatchObject({ changed_fields: ['roles'], data: { roles: [role.name] } });
  });

  it('answers an unknown or malformed group id with 404, a SCIM error', async () => {
    expectScimError(await scim('get', `/scim/v2/Groups/${randomUUID()}`), 404);
    expectScimError(await scim('get', '/scim/v2/Groups/not-an-id'), 404);
    expectScimError(await scim('patch', `/scim/v2/Groups/${randomUUID()}`, patch({ op: 'add', path: 'members', value: [] })), 404);
  });

  it('a filter it cannot read is 400 invalidFilter', async () => {
    expectScimError(await scim('get', `/scim/v2/Groups?filter=${q('displayName co "Sup"')}`), 400, 'invalidFilter');
    expectScimError(await scim('get', `/scim/v2/Groups?filter=${q('userName eq "a@example.com"')}`), 400, 'invalidFilter');
  });
});

describe("Okta's group push", () => {
  it('finds by displayName with startIndex and count, reads, renames to the same name, removes by filter, adds, removes a list, replaces with PUT', async () => {
    const role = await makeRole(database.db, [], `Okta ${randomUUID().slice(0, 8)}`);
    const [ann, ben, cat] = [await makeUser(database.db), await makeUser(database.db), await makeUser(database.db)];
    await database.db.insertInto('user_roles').values({ user_id: ann.id, role_id: role.id }).execute();
    let res = await scim('get', `/scim/v2/Groups?filter=${q(`displayName eq "${role.name}"`)}&startIndex=1&count=100`);
    expect(res.body).toMatchObject({ totalResults: 1, startIndex: 1, itemsPerPage: 1 });
    expect(memberIds(res.body.Resources[0])).toEqual([ann.id]);
    expect(res.body.Resources[0].members[0]).toMatchObject({ value: ann.id, display: 'Test User', $ref: `/scim/v2/Users/${ann.id}` });
    res = await scim('get', `/scim/v2/Groups/${role.id}`);
    expect(res.body.displayName).toBe(role.name);
    // Okta's path-less replace sends id and displayName back: the same name is no change.
    res = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'replace', value: { id: role.id, displayName: role.name } }));
    expect(res.status, res.text).toBe(200);
    // Remove Ann through a value filter, add Ben and Cat.
    res = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'remove', path: `members[value eq "${ann.id}"]` }));
    expect(res.status, res.text).toBe(200);
    expect(memberIds(res.body)).toEqual([]);
    res = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', path: 'members', value: [{ value: ben.id, display: ben.email }, { value: cat.id, display: cat.email }] }));
    expect(memberIds(res.body)).toEqual([ben.id, cat.id].sort());
    // Okta's removal: path members and a value list.
    res = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'remove', path: 'members', value: [{ value: cat.id }] }));
    expect(memberIds(res.body)).toEqual([ben.id]);
    // A replace of members.
    res = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'replace', path: 'members', value: [{ value: ann.id }] }));
    expect(memberIds(res.body)).toEqual([ann.id]);
    // Okta's PUT: the whole group back, members as wanted.
    res = await scim('put', `/scim/v2/Groups/${role.id}`, { schemas: [GROUP], id: role.id, displayName: role.name, members: [{ value: cat.id, display: cat.email }] });
    expect(res.status, res.text).toBe(200);
    expect(memberIds(res.body)).toEqual([cat.id]);
    expect(await rolesOf(ann.id)).toEqual([]);
    expect(await rolesOf(cat.id)).toEqual([role.id]);
    // A PUT renaming the group is refused.
    await nothingWritten(database, async () => {
      expectScimError(await scim('put', `/scim/v2/Groups/${role.id}`, { schemas: [GROUP], displayName: 'Renamed', members: [] }), 400, 'mutability');
    });
    // Removing every member the key may see.
    res = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'remove', path: 'members' }));
    expect(memberIds(res.body)).toEqual([]);
  });

  it('id and meta are read-only: 400 mutability, nothing written', async () => {
    const role = await makeRole(database.db, []);
    await nothingWritten(database, async () => {
      expectScimError(await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'replace', path: 'id', value: randomUUID() })), 400, 'mutability');
      expectScimError(await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'replace', path: 'meta.version', value: 'W/"9"' })), 400, 'mutability');
      expectScimError(await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'replace', path: 'colour', value: 'blue' })), 400, 'invalidPath');
    });
  });
});

/** A second connection of the test's own, as an administrator's request (or a sign-in) holds one. */
const otherConnection = () => connectionOf(database);
const waitsOnALock = (done: Promise<unknown>) => waitsIn(database, done);

describe('attacks on Groups', () => {
  it("a provisioning key adds its holder's person to the admin group: refused, nothing written", async () => {
    // A person allowed to provision makes a key for a directory, then tries to make themselves an administrator with it.
    const { creator: holder, role, secret } = await keyOfAPerson(database);
    const admin = await adminRoleId(database.db);
    await nothingWritten(database, async () => {
      expectScimError(await scim('patch', `/scim/v2/Groups/${admin}`, patch({ op: 'add', path: 'members', value: [{ value: holder.id }] }), secret), 404);
      expectScimError(await scim('put', `/scim/v2/Groups/${admin}`, { schemas: [GROUP], displayName: 'admin', members: [{ value: holder.id }] }, secret), 404);
      // Nor is the admin group listed to it, by name or at all.
      const found = await scim('get', `/scim/v2/Groups?filter=${q('displayName eq "admin"')}`, undefined, secret);
      expect(found.body.totalResults).toBe(0);
    });
    expect(await rolesOf(holder.id)).toEqual([role.id]);
  });

  it('a key adds a member to a group whose role grants a permission the key lacks: refused as an unknown group', async () => {
    const role = await makeRole(database.db, ['users.list']);
    const person = await makeUser(database.db);
    await nothingWritten(database, async () => {
      expectScimError(await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', path: 'members', value: [{ value: person.id }] })), 404);
    });
  });

  it('a key adds a member it may not see: 400 invalidValue, the same answer as an unknown id, nothing written', async () => {
    const role = await makeRole(database.db, []);
    const outranking = await makeRole(database.db, ['audit.read']);
    const hidden = await makeUser(database.db, { roleIds: [outranking.id] });
    const unknown = randomUUID();
    await nothingWritten(database, async () => {
      const seen = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', path: 'members', value: [{ value: hidden.id }] }));
      const never = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', path: 'members', value: [{ value: unknown }] }));
      expectScimError(seen, 400, 'invalidValue');
      expectScimError(never, 400, 'invalidValue');
      expect(seen.body.detail.replace(hidden.id, 'ID')).toBe(never.body.detail.replace(unknown, 'ID'));
      // Removing them, or naming them in a PUT, is the same.
      expectScimError(await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'remove', path: `members[value eq "${hidden.id}"]` })), 400, 'invalidValue');
      expectScimError(await scim('put', `/scim/v2/Groups/${role.id}`, { schemas: [GROUP], displayName: role.name, members: [{ value: hidden.id }] }), 400, 'invalidValue');
    });
    // Nor does a group list people the key may not see, nor does a replace take the role from them.
    await database.db.insertInto('user_roles').values({ user_id: hidden.id, role_id: role.id }).execute();
    const res = await scim('get', `/scim/v2/Groups/${role.id}`);
    expect(memberIds(res.body)).toEqual([]);
    await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'replace', path: 'members', value: [] }));
    expect(await rolesOf(hidden.id)).toEqual([outranking.id, role.id].sort());
  });

  it('a key removes the last administrator from the admin group: 409 last_admin, nothing written', async () => {
    const everything = (await makeApiKey(database.db, [...PERMISSIONS])).secret;
    const admin = await adminRoleId(database.db);
    // Whoever else holds the admin role in this database is made inactive, so one administrator is left.
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', 'in', database.db.selectFrom('user_roles').select('user_id').where('role_id', '=', admin)).execute();
    const last = await makeUser(database.db, { roleIds: [admin] });
    await nothingWritten(database, async () => {
      const res = await scim('patch', `/scim/v2/Groups/${admin}`, patch({ op: 'remove', path: `members[value eq "${last.id}"]` }), everything);
      expectScimError(res, 409);
      expect(res.body.code).toBe('last_admin');
      expectScimError(await scim('patch', `/scim/v2/Groups/${admin}`, patch({ op: 'remove', path: 'members' }), everything), 409);
      expectScimError(await scim('put', `/scim/v2/Groups/${admin}`, { schemas: [GROUP], displayName: 'admin', members: [] }, everything), 409);
    });
    expect(await rolesOf(last.id)).toEqual([admin]);
  });

  it('a PATCH whose last operation fails leaves the first ones unwritten (a real rollback)', async () => {
    const everything = (await makeApiKey(database.db, [...PERMISSIONS])).secret;
    const admin = await adminRoleId(database.db);
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', 'in', database.db.selectFrom('user_roles').select('user_id').where('role_id', '=', admin)).execute();
    const last = await makeUser(database.db, { roleIds: [admin] });
    // A disabled person added first (the grant is written in the transaction: people are changed in
    // the order the operations name them, and a disabled administrator does not count as one), then
    // the last active administrator removed: refused after the write, which must roll back.
    const dormant = await makeUser(database.db);
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', dormant.id).execute();
    // The same with an unknown member named after a member added.
    const role = await makeRole(database.db, []);
    const person = await makeUser(database.db);
    await nothingWritten(database, async () => {
      const res = await scim(
        'patch',
        `/scim/v2/Groups/${admin}`,
        patch({ op: 'add', path: 'members', value: [{ value: dormant.id }] }, { op: 'remove', path: `members[value eq "${last.id}"]` }),
        everything,
      );
      expectScimError(res, 409);
      const second = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', path: 'members', value: [{ value: person.id }] }, { op: 'add', path: 'members', value: [{ value: randomUUID() }] }));
      expectScimError(second, 400, 'invalidValue');
    });
    expect(await rolesOf(dormant.id)).toEqual([]);
    expect(await rolesOf(person.id)).toEqual([]);
    expect(await rolesOf(last.id)).toEqual([admin]);
  });

  it('10,000 members in one PATCH: 400 too_many_members, nothing written (and 413 under the default body limit)', async () => {
    const role = await makeRole(database.db, []);
    const members = Array.from({ length: 10_000 }, () => ({ value: randomUUID() }));
    // A deployment that raised BODY_LIMIT_BYTES still refuses more than 1,000 members in one request.
    const { app: roomy } = createTestApp(database.db, { clock: systemClock, options: { bodyLimitBytes: 2 * 1024 * 1024 } });
    await nothingWritten(database, async () => {
      const res = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', path: 'members', value: members }), key, roomy);
      expectScimError(res, 400, 'invalidValue');
      expect(res.body.code).toBe('too_many_members');
      const put = await scim('put', `/scim/v2/Groups/${role.id}`, { schemas: [GROUP], displayName: role.name, members }, key, roomy);
      expectScimError(put, 400);
      const split = await scim('patch', `/scim/v2/Groups/${role.id}`, patch(...Array.from({ length: 10 }, (_, i) => ({ op: 'add', path: 'members', value: members.slice(i * 101, (i + 1) * 101) }))), key, roomy);
      expect(split.body.code).toBe('too_many_members');
      expectScimError(await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', path: 'members', value: members })), 413);
    });
  });

  it('the limit is 1,000: a PATCH naming exactly 1,000 members is read (here refused for its unknown ids, not for its size), 1,001 is not', async () => {
    const role = await makeRole(database.db, []);
    const members = Array.from({ length: 1001 }, () => ({ value: randomUUID() }));
    const { app: roomy } = createTestApp(database.db, { clock: systemClock, options: { bodyLimitBytes: 2 * 1024 * 1024 } });
    await nothingWritten(database, async () => {
      const atLimit = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', path: 'members', value: members.slice(0, 1000) }), key, roomy);
      expectScimError(atLimit, 400, 'invalidValue');
      expect(atLimit.body.code).toBe('invalid_value');
      const over = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', path: 'members', value: members }), key, roomy);
      expect(over.body.code).toBe('too_many_members');
    });
  });

  it('two directories changing overlapping members in opposite orders at once: both answer, no deadlock, no 500', async () => {
    const [first, second] = [await makeRole(database.db, []), await makeRole(database.db, [])];
    const people: string[] = [];
    for (let i = 0; i < 12; i++) people.push((await makeUser(database.db)).id);
    const add = (roleId: string, ids: string[]) => scim('patch', `/scim/v2/Groups/${roleId}`, patch({ op: 'add', path: 'members', value: ids.map((value) => ({ value })) }));
    const answers = await Promise.all([add(first.id, people), add(second.id, [...people].reverse())]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    for (const id of people) expect(await rolesOf(id)).toEqual([first.id, second.id].sort());
  });

  it('prototype names in a Groups PATCH (__proto__, constructor, prototype) are 400 and pollute nothing', async () => {
    const role = await makeRole(database.db, []);
    const polluted = 'x-polluted-by-scim-groups';
    const attempts: object[] = [
      { op: 'add', path: `members.__proto__.${polluted}`, value: true },
      { op: 'replace', value: JSON.parse(`{"__proto__": {"${polluted}": true}}`) as object },
      { op: 'add', path: 'members', value: JSON.parse(`[{"value": "x", "__proto__": {"${polluted}": true}}]`) as object },
      { op: 'remove', path: `members[value eq "constructor"]` },
    ];
    for (const operation of attempts) {
      await nothingWritten(database, async () => {
        const res = await scim('patch', `/scim/v2/Groups/${role.id}`, patch(operation));
        expect(res.status, `${JSON.stringify(operation)}: ${res.text}`).toBe(400);
      });
      expect(({} as Record<string, unknown>)[polluted], JSON.stringify(operation)).toBeUndefined();
    }
  });

  it('a PATCH gives a role back to someone an administrator is taking it from at that moment: refused, the removal stands', async () => {
    // The race: P holds R; an administrator's transaction locks P and deletes the
    // grant; a directory's PATCH of R adding Q (and removing an unrelated person) arrives and waits
    // on P; the administrator commits. The PATCH must not re-grant R to P, whom it did not name.
    const role = await makeRole(database.db, []);
    const demoted = await makeUser(database.db, { roleIds: [role.id] });
    const added = await makeUser(database.db);
    const unrelated = (await makeUser(database.db)).id;
    for (const operations of [
      [{ op: 'add', path: 'members', value: [{ value: added.id }] }],
      [{ op: 'remove', path: `members[value eq "${unrelated}"]` }],
    ]) {
      await database.db.insertInto('user_roles').values({ user_id: demoted.id, role_id: role.id }).onConflict((oc) => oc.doNothing()).execute();
      const admin = await otherConnection();
      try {
        await admin.query('begin');
        await admin.query('select id from users where id = $1 for update', [demoted.id]);
        await admin.query('delete from user_roles where user_id = $1 and role_id = $2', [demoted.id, role.id]);
        const answer = scim('patch', `/scim/v2/Groups/${role.id}`, patch(...operations));
        // The PATCH waits on the administrator's lock of P (having read P as a member before it).
        expect(await waitsOnALock(answer)).toBe(true);
        await admin.query('commit');
        const res = await answer;
        expect(res.status, res.text).toBe(200);
        expect(memberIds(res.body)).not.toContain(demoted.id);
      } finally {
        await admin.end();
      }
      expect(await rolesOf(demoted.id)).toEqual([]);
    }
    expect(await rolesOf(added.id)).toEqual([role.id]);
  });

  it('1,001 members under the prefixed key or a key with spaces ("urn:...:Group:members", " members"): 400 too_many_members before anything is read', async () => {
    const role = await makeRole(database.db, []);
    const members = Array.from({ length: 1001 }, () => ({ value: randomUUID() }));
    const { app: roomy } = createTestApp(database.db, { clock: systemClock, options: { bodyLimitBytes: 2 * 1024 * 1024 } });
    await nothingWritten(database, async () => {
      for (const name of [`${GROUP}:members`, ' members', `${GROUP}:Members `]) {
        const res = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', value: { [name]: members } }), key, roomy);
        expectScimError(res, 400, 'invalidValue');
        expect(res.body.code, name).toBe('too_many_members');
      }
      const prefixedPath = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', path: ` ${GROUP}:members`, value: members }), key, roomy);
      expect(prefixedPath.body.code).toBe('too_many_members');
    });
  });

  it('a hidden person named in a PATCH is not locked: a sign-in holding their row does not hold the request up, and the answer is the unknown id\'s', async () => {
    const role = await makeRole(database.db, []);
    const admin = await adminRoleId(database.db);
    const hidden = await makeUser(database.db, { roleIds: [admin] });
    const visible = await makeUser(database.db);
    const signIn = await otherConnection();
    try {
      await signIn.query('begin');
      // A sign-in reads the person FOR SHARE; a FOR UPDATE of the same row waits for it.
      await signIn.query('select id from users where id = $1 for share', [hidden.id]);
      const answer = scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', path: 'members', value: [{ value: visible.id }, { value: hidden.id }] }));
      const waited = await waitsOnALock(answer);
      await signIn.query('commit');
      expect(waited, 'the PATCH waited on the hidden person\'s row').toBe(false);
      const res = await answer;
      expectScimError(res, 400, 'invalidValue');
      expect(res.body.detail).toBe(`No user has the id ${hidden.id}.`);
    } finally {
      await signIn.end();
    }
    expect(await rolesOf(visible.id)).toEqual([]);
  });

  it("a key's creator loses scim.provision while the key's PATCH waits on a lock: the PATCH is refused as the key now would be, nothing written", async () => {
    const { creator, secret } = await keyOfAPerson(database);
    const role = await makeRole(database.db, []);
    const person = await makeUser(database.db);
    const admin = await otherConnection();
    try {
      // An administrator's transaction holds the person's row and takes the creator's role.
      await admin.query('begin');
      await admin.query('select id from users where id = $1 for update', [person.id]);
      await admin.query('delete from user_roles where user_id = $1', [creator.id]);
      const answer = scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'add', path: 'members', value: [{ value: person.id }] }), secret);
      expect(await waitsOnALock(answer)).toBe(true);
      await admin.query('commit');
      const res = await answer;
      expectScimError(res, 403);
      expect(res.body.code).toBe('permission_denied');
    } finally {
      await admin.end();
    }
    expect(await rolesOf(person.id)).toEqual([]);
  });

  it('a person whose role a directory takes loses its rights on their very next request', async () => {
    const role = await makeRole(database.db, ['tasks.list']);
    const wider = (await makeApiKey(database.db, ['scim.provision', 'tasks.list'])).secret;
    const person = await createUser(database.db);
    await database.db.insertInto('user_roles').values({ user_id: person.id, role_id: role.id }).execute();
    const tokens = await signIn(app, person.email, person.password);
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    expect((await request(app).get('/tasks').set(bearer)).status).toBe(200);
    const res = await scim('patch', `/scim/v2/Groups/${role.id}`, patch({ op: 'remove', path: `members[value eq "${person.id}"]` }), wider);
    expect(res.status, res.text).toBe(200);
    expect((await request(app).get('/tasks').set(bearer)).status).toBe(403);
  });
});

describe('discovery lists Groups', () => {
  it('ResourceTypes, Schemas and ServiceProviderConfig name Groups and the member limit', async () => {
    const types = await scim('get', '/scim/v2/ResourceTypes');
    expect(types.body.Resources.map((r: { id: string }) => r.id)).toEqual(['User', 'Group']);
    const schemas = await scim('get', '/scim/v2/Schemas');
    expect(schemas.body.Resources.map((r: { id: string }) => r.id)).toContain(GROUP);
    const config = await scim('get', '/scim/v2/ServiceProviderConfig');
    expect(config.body.maxMembersPerRequest).toBe(1000);
  });
});
