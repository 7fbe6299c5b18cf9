// Refreshing (POST /tokens, POST /jetons): rotation, the grace window, reuse detection, lifetimes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, refresh, signIn, type TokenSetBody } from './support/sessions.js';
import { ManualClock } from '../src/clock.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

async function setUp(env: Record<string, string> = {}) {
  const clock = new ManualClock(new Date('2026-06-01T10:00:00.000Z'));
  const { app } = createTestApp(database.db, { clock, env });
  const user = await createUser(database.db, { permissions: ['users.list'] });
  const set = await signIn(app, user.email, user.password);
  return { app, clock, user, set };
}

const canUse = async (app: Parameters<typeof request>[0], set: TokenSetBody) =>
  (await request(app).get('/users').set('authorization', `Bearer ${set.access_token}`)).status;

describe('POST /tokens', () => {
  it('answers 201 with a new no-store token set; the new access token works', async () => {
    const { app, set } = await setUp();
    const res = await refresh(app, set);
    expect(res.status).toBe(201);
    expectContractResponse(res, 'POST', '/tokens');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.access_token).not.toBe(set.access_token);
    expect(res.body.refresh_token).not.toBe(set.refresh_token);
    expect(await canUse(app, res.body)).toBe(200);
  });

  it('is also served at POST /jetons', async () => {
    const { app, set } = await setUp();
    const res = await refresh(app, set, '/jetons');
    expect(res.status).toBe(201);
    expectContractResponse(res, 'POST', '/jetons');
  });

  it('accepts an expired access token of the same session', async () => {
    const { app, clock, set } = await setUp();
    clock.advance(3600_000);
    expect(await canUse(app, set)).toBe(401);
    const res = await refresh(app, set);
    expect(res.status).toBe(201);
    expect(await canUse(app, res.body)).toBe(200);
  });

  it("refuses another session's access token, a missing one, and malformed or unknown refresh tokens", async () => {
    const { app, user, set } = await setUp();
    const other = await signIn(app, user.email, user.password);
    const mixed = await refresh(app, { access_token: other.access_token, refresh_token: set.refresh_token });
    expect(mixed.status).toBe(401);
    expect(mixed.body.code).toBe('invalid_token');
    expectContractResponse(mixed, 'POST', '/tokens');
    const missing = await request(app).post('/tokens').send({ refresh_token: set.refresh_token });
    expect(missing.status).toBe(401);
    const malformed = await refresh(app, { access_token: set.access_token, refresh_token: 'bor_nope' });
    expect(malformed.body.code).toBe('invalid_refresh_token');
    const wrongKind = await refresh(app, { access_token: set.access_token, refresh_token: set.access_token });
    expect(wrongKind.body.code).toBe('invalid_refresh_token');
    // None of these used the refresh token up.
    expect((await refresh(app, set)).status).toBe(201);
  });

  it('replaying the oldest of four rotated refresh tokens after the grace window revokes the session, newest tokens included', async () => {
    const { app, clock, set } = await setUp();
    const sets = [set];
    for (let i = 0; i < 3; i++) {
      clock.advance(11_000);
      const res = await refresh(app, sets.at(-1)!);
      expect(res.status).toBe(201);
      sets.push(res.body);
    }
    const newest = sets.at(-1)!;
    expect(await canUse(app, newest)).toBe(200);
    const replay = await refresh(app, sets[0]!);
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('refresh_token_reused');
    expectContractResponse(replay, 'POST', '/tokens');
    expect(await canUse(app, newest)).toBe(401);
    const refreshNewest = await refresh(app, newest);
    expect(refreshNewest.status).toBe(401);
    expect(refreshNewest.body.code).toBe('session_ended');
    const events = await database.db.selectFrom('security_events').select('type').where('type', '=', 'refresh_token_reused').execute();
    expect(events.length).toBeGreaterThanOrEqual(1);
  });

  it('records the rotation, and a reuse with the revocation, as the user acting on their own session, with the request id answered (not the one sent)', async () => {
    const { app, clock, user, set } = await setUp();
    const session = (await database.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).executeTakeFirstOrThrow()).id;
    const events = (type: string) => database.db.selectFrom('security_events').selectAll().where('session_id', '=', session).where('type', '=', type).execute();
    const byUser = {
      user_id: user.id,
      session_id: session,
      actor_type: 'user',
      actor_id: user.id,
      actor_session_id: session,
      actor_label: expect.stringMatching(/^Test Person \d+$/),
      target_type: 'session',
      target_id: session,
      target_label: expect.stringMatching(/^Test Person \d+$/),
      ip_address: expect.stringMatching(/127\.0\.0\.1/),
      user_agent: 'refreshing agent',
      changes: null,
    };
    const rotated = await request(app).post('/tokens').set('authorization', `Bearer ${set.access_token}`).set('x-request-id', 'rotate-1').set('user-agent', 'refreshing agent').send({ refresh_token: set.refresh_token });
    expect(rotated.status).toBe(201);
    expect(rotated.headers['x-request-id']).not.toBe('rotate-1');
    expect(await events('tokens_refreshed')).toEqual([expect.objectContaining({ ...byUser, request_id: rotated.headers['x-request-id'], details: { generation: 2 } })]);
    const [refreshed] = await events('tokens_refreshed');
    expect(refreshed!.actor_label).toBe(refreshed!.target_label);

    clock.advance(11_000);
    const reused = await request(app).post('/tokens').set('authorization', `Bearer ${set.access_token}`).set('x-request-id', 'reuse-1').set('user-agent', 'refreshing agent').send({ refresh_token: set.refresh_token });
    expect(reused.body.code).toBe('refresh_token_reused');
    const reuseId = reused.headers['x-request-id'] as string;
    expect(reuseId).not.toBe('reuse-1');
    expect(reused.body.request_id).toBe(reuseId);
    expect(await events('refresh_token_reused')).toEqual([expect.objectContaining({ ...byUser, request_id: reuseId, details: {} })]);
    expect(await events('session_revoked')).toEqual([expect.objectContaining({ ...byUser, request_id: reuseId, details: { reason: 'refresh_token_reused' } })]);
  });

  it('inside the grace window gives the same new token set again; just past it, revokes', async () => {
    const { app, clock, set } = await setUp();
    const first = await refresh(app, set);
    clock.advance(10_000);
    const again = await refresh(app, set);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    clock.advance(1);
    const late = await refresh(app, set);
    expect(late.status).toBe(401);
    expect(late.body.code).toBe('refresh_token_reused');
    expect(await canUse(app, first.body)).toBe(401);
  });

  it('advances the session exactly one generation when 50 callers race with the same refresh token, and all get the same set', async () => {
    const { app, user, set } = await setUp();
    const server = app.listen(0);
    try {
      const responses = await Promise.all(Array.from({ length: 50 }, () => refresh(server, set)));
      expect(responses.map((r) => r.status)).toEqual(Array(50).fill(201));
      const distinct = new Set(responses.map((r) => `${r.body.access_token} ${r.body.refresh_token}`));
      expect(distinct.size).toBe(1);
      const session = await database.db.selectFrom('sessions').select(['id', 'generation']).where('user_id', '=', user.id).executeTakeFirstOrThrow();
      expect(session.generation).toBe(2);
      const tokenRows = await database.db.selectFrom('session_tokens').select('generation').where('session_id', '=', session.id).execute();
      expect(tokenRows.map((r) => r.generation).sort()).toEqual([1, 2]);
      expect(await canUse(server, responses[0]!.body)).toBe(200);
    } finally {
      server.close();
    }
  });

  it('refuses refresh past the idle timeout and past the absolute lifetime', async () => {
    const idle = await setUp({ SESSION_IDLE_TIMEOUT_S: '3600', SESSION_LIFETIME_S: '86400' });
    idle.clock.advance(3600_000);
    const idleRes = await refresh(idle.app, idle.set);
    expect(idleRes.status).toBe(401);
    expect(idleRes.body.code).toBe('session_expired');

    const old = await setUp({ SESSION_IDLE_TIMEOUT_S: '3600', SESSION_LIFETIME_S: '7200' });
    let current = old.set;
    for (let i = 0; i < 3; i++) {
      old.clock.advance(3000_000); // 50 min: used often enough never to idle out; 150 min > 120 min lifetime
      const res = await refresh(old.app, current);
      if (i < 2) {
        expect(res.status).toBe(201);
        current = res.body;
      } else {
        expect(res.status).toBe(401);
        expect(res.body.code).toBe('session_expired');
      }
    }
  });
});
