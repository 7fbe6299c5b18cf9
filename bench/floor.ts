// The floor of the benchmarks: the least any service must spend on this stack (Express 5 + pg) for
// the same answers as the service. It does exactly the work the answer needs and nothing else: the
// credential's checksum and SHA-256, the service's own SQL (imported from its repositories, so the
// two cannot drift apart) as named prepared statements, the expiry and permission checks, the
// service's page of users or token set, res.json. No validation, no logging, no security headers,
// no inflection: what the service adds over this is what bench/ measures. Served as the service is
// served (below, where `routes` is made).
//   GET /users?limit=n   with x-api-key or Authorization: Bearer (the first page, no filters)
//   POST /tokens         refresh, with the service's one-statement rotation
//   GET /meetings?from&until&attendee_id=<uuid>   one person's first page of a range, either credential
//   GET /tasks?limit=n   the first page of tasks (no filters, oldest first), either credential
// Env: DATABASE_URL, PORT. Pool of 10 connections, as the service's default.
// FLOOR_AUTHENTICATION=none: the floor with no authentication at all (no credential read, no key
// statement; every request answered as if allowed), what knowing the caller is compared with.
import { randomUUID } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import pg from 'pg';
import { pino } from 'pino';
import { keyBySecretDigest } from '../src/api-keys/repository.js';
import { isWellFormedApiKey } from '../src/api-keys/secret.js';
import { digestSecret } from '../src/auth/secrets/secrets.js';
import { EVERY_PERMISSION, bearerSession, refreshTokenSet, touchSession } from '../src/auth/sessions/repository.js';
import { ACCESS_TOKEN_TTL_S, isAccessToken, isRefreshToken, newTokenSet, sealTokenSet, unsealTokenSet } from '../src/auth/sessions/tokens.js';
import { firstPage, type ListedUser } from '../src/users/repository.js';
import { presentUser } from '../src/users/presenter.js';
import { encodeCursor } from '../src/users/cursor.js';
import type { FixedStatement } from '../src/db/fixed-statement.js';
import { dispatchWithoutRouter } from '../src/http/dispatch.js';
import { createHttpServer } from '../src/http/server.js';
import { personFirstPage, type ListedMeeting } from '../src/meetings/repository.js';
import { presentMeeting } from '../src/meetings/presenter.js';
import { encodeCursor as encodeMeetingCursor } from '../src/meetings/cursor.js';
import { firstPage as firstTaskPage, type ListedTask } from '../src/tasks/repository.js';
import { presentTask } from '../src/tasks/presenter.js';
import { encodeCursor as encodeTaskCursor } from '../src/tasks/cursor.js';

const IDLE_TIMEOUT_MS = 7 * 24 * 3600 * 1000; // the service's defaults
const REFRESH_GRACE_S = 10;
const BEARER = /^bearer +(\S+) *$/i;

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
pool.on('error', () => {});
// The service's cursor signing key (made at its first start; the floor starts after the service):
// the next_cursor of a page is signed, so the floor signs it too.
const cursorKey = (await pool.query<{ secret: Buffer }>("select secret from service_secrets where name = 'cursor_signing'")).rows[0]!.secret;

/** Runs one of the service's statements, prepared under a name of its own; its rows read as the service reads them. */
async function run<P, R>(name: string, statement: FixedStatement<P, R>, values: P): Promise<R[]> {
  return statement.readRows(await pool.query({ name, text: statement.sql, values: statement.parameters(values), rowMode: 'array' }));
}

const refuse = (res: Response, status: number) => void res.status(status).json({ status });

const NO_AUTHENTICATION = process.env.FLOOR_AUTHENTICATION === 'none';

/** 200 when the request's credential is good and holds `permission`, else the refusal's status. */
async function mayCall(req: Request, permission: string): Promise<number> {
  if (NO_AUTHENTICATION) return 200;
  const now = new Date();
  const apiKey = req.headers['x-api-key'];
  if (typeof apiKey === 'string') {
    if (!isWellFormedApiKey(apiKey)) return 401;
    const [key] = await run('key', keyBySecretDigest, { digest: digestSecret(apiKey) });
    if (!key || key.revoked_at || (key.retires_at && key.retires_at <= now) || (key.expires_at && key.expires_at <= now)) return 401;
    return key.permissions.includes(permission) ? 200 : 403;
  }
  const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
  if (!token || !isAccessToken(token)) return 401;
  const touchBefore = new Date(now.getTime() - 60_000);
  const [session] = await run('bearer', bearerSession, {
    accessDigest: digestSecret(token),
    issuedAfter: new Date(now.getTime() - ACCESS_TOKEN_TTL_S * 1000),
    now,
    idleCutoff: new Date(now.getTime() - IDLE_TIMEOUT_MS),
    adminsNeedSecondFactor: true, // ADMIN_SECOND_FACTOR's default
    touchBefore,
  });
  if (!session) return 401;
  if (session.stale) void run('touch', touchSession, { sessionId: session.session_id, now, touchBefore }).catch(() => {});
  return session.permissions.includes(EVERY_PERMISSION) || session.permissions.includes(permission) ? 200 : 403;
}

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
// The routes, in one router handed every request as the service's steps are (dispatchWithoutRouter
// in place of Express's app.handle: no app-level router, and no request or response re-prototyped,
// as createHttpServer makes them with Express's prototypes from birth). Any Express app can be run
// with those two, and the floor is the least such an app must spend, so it is.
const routes = express.Router();

routes.get('/users', async (req, res) => {
  const status = await mayCall(req, 'users.list');
  if (status !== 200) return refuse(res, status);
  const limit = Number(req.query.limit ?? 50);
  const rows: ListedUser[] = await run('page', firstPage, { limit: limit + 1, afterCreatedAt: '', afterId: '', status: '', role: '', pattern: '' });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  res.json({ data: page.map(presentUser), next_cursor: rows.length > limit && last ? encodeCursor(cursorKey, { createdAt: last.cursor_created_at, id: last.id }, {}) : null });
});

routes.get('/meetings', async (req, res) => {
  const status = await mayCall(req, 'meetings.list');
  if (status !== 200) return refuse(res, status);
  const limit = Number(req.query.limit ?? 50);
  const scope = { from: new Date(String(req.query.from)), until: new Date(String(req.query.until)), attendeeId: String(req.query.attendee_id) };
  const rows: ListedMeeting[] = await run('week', personFirstPage, { ...scope, afterStartsAt: '', afterId: '', limit: limit + 1 });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  res.json({ data: page.map(presentMeeting), next_cursor: rows.length > limit && last ? encodeMeetingCursor(cursorKey, { startsAt: last.cursor_starts_at, id: last.id }, scope) : null });
});

routes.get('/tasks', async (req, res) => {
  const status = await mayCall(req, 'tasks.list');
  if (status !== 200) return refuse(res, status);
  const limit = Number(req.query.limit ?? 50);
  const rows: ListedTask[] = await run('tasks', firstTaskPage, { limit: limit + 1, afterKey: '', afterId: '', statuses: [], assigneeId: '', dueBefore: '', dueAfter: '', search: '' });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  res.json({ data: page.map(presentTask), next_cursor: rows.length > limit && last ? encodeTaskCursor(cursorKey, { key: last.cursor_key, id: last.id }, { sort: 'created_at' }) : null });
});

routes.post('/tokens', express.json(), async (req, res) => {
  const accessToken = BEARER.exec(req.headers.authorization ?? '')?.[1];
  const refreshToken = (req.body as { refresh_token?: unknown }).refresh_token;
  if (!accessToken || !isAccessToken(accessToken) || typeof refreshToken !== 'string' || !isRefreshToken(refreshToken)) return refuse(res, 401);
  const now = new Date();
  const set = newTokenSet();
  const [result] = await run('refresh', refreshTokenSet, {
    refreshDigest: digestSecret(refreshToken),
    accessDigest: digestSecret(accessToken),
    now,
    idleCutoff: new Date(now.getTime() - IDLE_TIMEOUT_MS),
    graceS: REFRESH_GRACE_S,
    newAccessDigest: digestSecret(set.access_token),
    newRefreshDigest: digestSecret(set.refresh_token),
    successorSealed: sealTokenSet(set, refreshToken),
    ip: req.ip ?? '',
    userAgent: req.headers['user-agent'] ?? '',
    requestId: randomUUID(), // the service records its request id with the event
  });
  if (result!.outcome !== 'issued' && result!.outcome !== 'replayed') return refuse(res, 401);
  res.status(201).set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  res.json(result!.outcome === 'issued' ? set : unsealTokenSet(result!.successor_sealed!, refreshToken));
});

routes.get('/livez', (_req, res) => void res.json({ status: 'ok' }));
const quiet = pino({ enabled: false });
dispatchWithoutRouter(app, quiet, routes, (_req, res) => void res.status(404).end(), (_err, _req, res, _next) => void res.status(500).end());
createHttpServer(app).listen(Number(process.env.PORT), '127.0.0.1');
