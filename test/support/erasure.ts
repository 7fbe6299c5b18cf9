// Erasing a person in tests (docs/ERASURE.md): a person with a full life in the back office, and
// the search for anything left of them in every column of every table.
import request from 'supertest';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { createUserWithPassword } from '../../src/users/credentials.js';
import { PERMISSIONS } from '../../src/auth/permissions.js';
import { ManualClock } from '../../src/clock.js';
import { fanOutEvents } from '../../src/webhooks/repository.js';
import { sealAuditEvents } from '../../src/audit/seal.js';
import { createTestApp } from './context.js';
import { createUser, signIn } from './sessions.js';
import { enrolTotp } from './second-factor.js';
import { apiKeyRow } from './rows.js';

/** What names the person: none of it may be found after the erasure. */
export const PERSON = {
  email: 'zephyrine.quillfeather@example.org',
  firstName: 'Zephyrine',
  lastName: 'Quillfeather',
  password: 'a long password of Zephyrine',
  ip: '203.0.113.77',
  userAgent: 'ZephyrBrowser/9.1 (erasure test)',
};

export const TRACES = [PERSON.email, PERSON.firstName, PERSON.lastName, PERSON.ip, PERSON.userAgent];

/** Every (table, column) whose text holds one of `texts`, case-insensitively: each column of each table, as text (binary columns left out). */
export async function findTraces(db: Kysely<Database>, texts: readonly string[]): Promise<string[]> {
  const { rows: columns } = await sql<{ table_name: string; column_name: string }>`
    select c.table_name, c.column_name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
    where c.table_schema = current_schema() and c.data_type <> 'bytea'
    order by c.table_name, c.ordinal_position`.execute(db);
  const patterns = texts.map((t) => `%${t}%`);
  const found: string[] = [];
  for (const { table_name, column_name } of columns) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table_name)} where ${sql.ref(column_name)}::text ilike any (${patterns}::text[])`.execute(db);
    if (rows[0]!.n > 0) found.push(`${table_name}.${column_name}`);
  }
  return found;
}

/**
 * A person who signed in (from PERSON.ip with PERSON.userAgent), chose French for their messages, enrolled an authenticator app,
 * owns and is assigned tasks, organised and attended meetings, invited someone (resent by the
 * eraser), created an API key, had a message
 * to their address, was renamed, and is the subject of stored events delivered to a partner's
 * endpoint; their sealed and unsealed audit events. The eraser: a person holding every permission,
 * signed in and stepped up.
 */
export async function aPersonWithALife(db: Kysely<Database>, clock = new ManualClock(new Date())) {
  const { app, services } = createTestApp(db, { clock, env: { TRUST_PROXY: 'loopback' } });
  const eraser = await createUser(db, { permissions: [...PERMISSIONS] });
  const eraserSet = await signIn(app, eraser.email, eraser.password);
  await db.updateTable('sessions').set({ stepped_up_at: clock.now(), step_up_method: 'password' }).where('user_id', '=', eraser.id).execute();
  const asEraser = { authorization: `Bearer ${eraserSet.access_token}` };

  // A partner's endpoint, hearing of tasks, meetings and users.
  await db
    .insertInto('webhook_endpoints')
    .values({
      url: 'http://127.0.0.1:9/hook',
      description: null,
      event_types: ['task.created', 'task.updated', 'meeting.created', 'user.created', 'user.updated', 'user.erased'],
      secret_sealed: Buffer.alloc(60),
      created_by_user_id: eraser.id,
      created_at: clock.now(),
      updated_at: clock.now(),
    })
    .execute();

  const { id } = await createUserWithPassword(db, { email: PERSON.email, firstName: PERSON.firstName, lastName: 'Placeholder', password: PERSON.password, roles: [] });
  const role = await db.insertInto('roles').values({ name: `role-${id}`, name_key: `role-${id}` }).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('role_permissions').values(['tasks.create', 'tasks.read', 'meetings.read', 'invitations.manage', 'users.create'].map((permission) => ({ role_id: role.id, permission }))).execute();
  await db.insertInto('user_roles').values({ user_id: id, role_id: role.id }).execute();
  // Renamed by the eraser: an audit event whose changes carry both names, a user.updated event.
  const renamed = await request(app).patch(`/users/${id}`).set(asEraser).send({ last_name: PERSON.lastName });
  if (renamed.status !== 200) throw new Error(`PATCH /users answered ${renamed.status}: ${renamed.text}`);

  const from = { 'x-forwarded-for': PERSON.ip, 'user-agent': PERSON.userAgent };
  const signedIn = await request(app).post('/sessions').set(from).send({ session: { email: PERSON.email, password: PERSON.password } });
  if (signedIn.status !== 201) throw new Error(`sign-in answered ${signedIn.status}: ${signedIn.text}`);
  const set = signedIn.body as { access_token: string; refresh_token: string };
  const asPerson = { ...from, authorization: `Bearer ${set.access_token}` };
  const language = await request(app).patch('/me').set(asPerson).send({ language: 'fr' });
  if (language.status !== 200) throw new Error(`PATCH /me answered ${language.status}: ${language.text}`);
  await enrolTotp(app, set.access_token, clock, PERSON.password);

  // Tasks they own and are assigned; a meeting they organise, one they attend.
  const own = await request(app).post('/tasks').set(asPerson).send({ title: 'Water the office plants' });
  const assigned = await request(app).post('/tasks').set(asEraser).send({ title: 'Review the quarterly numbers', assignee_id: id });
  const organised = await request(app)
    .post('/meetings')
    .set(asEraser)
    .send({ title: 'Planning', starts_at: '2027-02-01T10:00:00.000Z', ends_at: '2027-02-01T11:00:00.000Z', organizer_id: id, attendee_ids: [eraser.id] });
  const attended = await request(app)
    .post('/meetings')
    .set(asEraser)
    .send({ title: 'Review', starts_at: '2027-02-02T10:00:00.000Z', ends_at: '2027-02-02T11:00:00.000Z', attendee_ids: [id] });
  for (const made of [own, assigned, organised, attended]) if (made.status !== 201) throw new Error(`create answered ${made.status}: ${made.text}`);

  // An invitation they sent: its message names them as the inviter, to someone else; resent by
  // another person, it still names them (the invitation is theirs).
  await db.updateTable('sessions').set({ stepped_up_at: clock.now(), step_up_method: 'totp' }).where('user_id', '=', id).execute();
  const invited = await request(app).post('/invitations').set(asPerson).send({ email: `invited-${id}@example.net` });
  if (invited.status !== 201) throw new Error(`POST /invitations answered ${invited.status}: ${invited.text}`);
  const resent = await request(app).post(`/invitations/${invited.body.id}/resend`).set(asEraser);
  if (resent.status !== 200) throw new Error(`resend answered ${resent.status}: ${resent.text}`);

  // A key they created; a message to their address.
  const key = await db
    .insertInto('api_keys')
    .values(apiKeyRow({ name: 'plants-sync', permissions: ['tasks.read'], display_prefix: 'bok_test', last_characters: 'abcd', created_by: id, created_at: clock.now(), updated_at: clock.now() }))
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('messages').values({ recipient: PERSON.email, kind: 'invitation', language: 'en', subject: 'Hello', body: `Dear ${PERSON.firstName} ${PERSON.lastName}, welcome.` }).execute();

  // The partner's deliveries of the events about them, one answered with an echo of the payload.
  for (let round = 0; round < 50; round++) {
    const { heldBack } = await fanOutEvents(db, 100);
    if (!heldBack) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await db
    .updateTable('webhook_deliveries')
    .set({ last_response: `ok ${PERSON.email}` })
    .where('event_id', 'in', (eb) => eb.selectFrom('events').select('id').where(sql<string>`payload::text`, 'like', `%${id}%`))
    .execute();
  if ((await db.selectFrom('webhook_deliveries').select('id').where('last_response', 'like', `%${PERSON.email}%`).execute()).length === 0) throw new Error('no delivery of an event about the person');

  // The events so far sealed; one more sign-in afterwards, not sealed yet.
  await sealAuditEvents(db, clock.now());
  clock.advance(60_000);
  const again = await request(app).post('/sessions').set(from).send({ session: { email: PERSON.email, password: PERSON.password } });
  if (again.status !== 202) throw new Error(`second sign-in answered ${again.status}: ${again.text}`);
  const wrong = await request(app).post('/sessions').set(from).send({ session: { email: PERSON.email, password: 'not the password at all' } });
  if (wrong.status !== 401) throw new Error(`a wrong password answered ${wrong.status}: ${wrong.text}`);

  return {
    app,
    services,
    clock,
    person: { id },
    set,
    eraser: { ...eraser, headers: asEraser },
    tasks: [own.body.id, assigned.body.id] as string[],
    meetings: [organised.body.id, attended.body.id] as string[],
    keyId: key.id,
  };
}
