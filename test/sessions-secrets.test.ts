// No token, password or key reaches a log line or is stored in clear; security events are recorded.
import { afterAll, beforeAll, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, refresh, signIn } from './support/sessions.js';
import { ManualClock } from '../src/clock.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

async function everyStoredValue(): Promise<string> {
  const tables = ['users', 'roles', 'role_permissions', 'user_roles', 'sessions', 'session_tokens', 'sign_in_failures', 'security_events'];
  const dumps = [];
  for (const table of tables) {
    // bytea columns come out hex-encoded in row_to_json: check both the text and the hex form below.
    const { rows } = await sql<{ j: unknown }>`select row_to_json(t) as j from ${sql.table(table)} t`.execute(database.db);
    dumps.push(JSON.stringify(rows));
  }
  return dumps.join('\n');
}

it('keeps tokens, passwords and keys out of logs and out of the database', async () => {
  const clock = new ManualClock(new Date('2026-06-01T10:00:00.000Z'));
  const { app, logs } = createTestApp(database.db, { clock });
  const user = await createUser(database.db, { permissions: ['users.list'] });
  const newPassword = 'another long secret sentence';
  const wrongPassword = 'an attempted wrong secret';
  const apiKey = 'bok_ThisIsNotARealKeyButMustNotBeLogged0000000_abcdef';

  await request(app).post('/sessions').send({ session: { email: user.email, password: wrongPassword } }).expect(401);
  const first = await signIn(app, user.email, user.password);
  await request(app).get('/users').set('authorization', `Bearer ${first.access_token}`).expect(200);
  await request(app).get('/users').set('x-api-key', apiKey);
  const second = (await refresh(app, first)).body;
  clock.advance(20_000);
  await request(app)
    .put('/me/password')
    .set('authorization', `Bearer ${second.access_token}`)
    .send({ current_password: user.password, new_password: newPassword })
    .expect(204);
  await refresh(app, first).expect(401); // reuse: the session is revoked, logged as a refusal

  const secrets = [user.password, newPassword, wrongPassword, apiKey, first.access_token, first.refresh_token, second.access_token, second.refresh_token];
  const logText = logs.text();
  const stored = await everyStoredValue();
  expect(logText.length).toBeGreaterThan(0);
  for (const secret of secrets) {
    expect(logText, 'a secret in the logs').not.toContain(secret);
    expect(stored, 'a secret stored in clear').not.toContain(secret);
    expect(stored, 'a secret stored in clear (hex)').not.toContain(Buffer.from(secret).toString('hex'));
  }
  // What is stored for tokens is their SHA-256 digest.
  const digests = await database.db.selectFrom('session_tokens').select(['access_digest', 'refresh_digest']).execute();
  expect(digests.every((d) => d.access_digest.length === 32 && d.refresh_digest.length === 32)).toBe(true);
});

it('records security events with time, user, IP and user agent', async () => {
  const clock = new ManualClock(new Date('2026-08-01T10:00:00.000Z'));
  const { app } = createTestApp(database.db, { clock });
  const user = await createUser(database.db);
  await request(app).post('/sessions').set('user-agent', 'Events/1').send({ session: { email: user.email, password: 'wrong wrong wrong' } }).expect(401);
  const set = await signIn(app, user.email, user.password, 'Events/1');
  const next = (await refresh(app, set).set('user-agent', 'Events/1')).body;
  await request(app)
    .put('/me/password')
    .set('authorization', `Bearer ${next.access_token}`)
    .set('user-agent', 'Events/1')
    .send({ current_password: user.password, new_password: 'yet another long sentence' })
    .expect(204);
  const other = await signIn(app, user.email, 'yet another long sentence', 'Events/1');
  await request(app).delete('/sessions/current').set('authorization', `Bearer ${other.access_token}`).set('user-agent', 'Events/1').expect(204);
  clock.advance(60_000);
  await refresh(app, set).set('user-agent', 'Events/1').expect(401);

  // After the user's creation, recorded as the command line's act (no address, no user agent).
  const [created, ...events] = await database.db.selectFrom('security_events').selectAll().where('user_id', '=', user.id).orderBy('id').execute();
  expect(created).toMatchObject({ type: 'user_created', actor_type: 'cli', ip_address: null, user_agent: null });
  expect(events.map((e) => e.type)).toEqual([
    'sign_in_failed',
    'sign_in_succeeded',
    'tokens_refreshed',
    'password_changed',
    'sign_in_succeeded',
    'session_revoked',
    'refresh_token_reused',
    'session_revoked',
  ]);
  for (const event of events) {
    expect(event.user_agent).toBe('Events/1');
    expect(event.ip_address).toMatch(/127\.0\.0\.1|::1/);
    expect(event.occurred_at).toBeInstanceOf(Date);
  }
  expect(events[0]!.details).toEqual({ reason: 'wrong_password' });
});
