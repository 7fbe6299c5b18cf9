// Second factors in tests: enrolling an authenticator app through the API and computing its codes
// as the app would (RFC 6238, at the test's clock), and the second step of signing in.
import request from 'supertest';
import { Secret, TOTP } from 'otpauth';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { Clock } from '../../src/clock.js';
import type { TokenSetBody } from './sessions.js';
type App = Parameters<typeof request>[0];

/** The code an authenticator app holding `secret` (base32) shows at `at`. */
export function totpCode(secret: string, at: Date): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: at.getTime() });
}

/**
 * Waits, if need be, until the current 30-second step has at least `ms` left on the wall clock. A
 * test that sends a code for a step relative to now, against a service on the real clock, calls it
 * first: the code is then still inside the service's window (one step either side) when a slow
 * machine delivers it.
 */
export async function untilStepHasLeft(ms: number): Promise<void> {
  const left = 30_000 - (Date.now() % 30_000);
  if (left < ms) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

/** POST /sessions/current/step-up: a fresh proof for the session of `accessToken` (docs/AUTH.md, "Step-up"). */
export function stepUp(app: App, accessToken: string, body: { totp_code?: string; recovery_code?: string; password?: string; passkey?: unknown }) {
  return request(app).post('/sessions/current/step-up').set('authorization', `Bearer ${accessToken}`).send(body);
}

/**
 * Marks every live session of `userId` as stepped up by password now (wall-clock time), straight in
 * the table: for tests about something else that must not pay for one more password hash per person.
 */
export async function steppedUpInDatabase(db: Kysely<Database>, userId: string): Promise<void> {
  await db.updateTable('sessions').set({ stepped_up_at: new Date(), step_up_method: 'password' }).where('user_id', '=', userId).where('revoked_at', 'is', null).where('ended_at', 'is', null).execute();
}

/** Steps the session of `accessToken` up with the password (a person without a second factor), for a test about something else than step-up. */
export async function steppedUp(app: App, accessToken: string, password: string): Promise<void> {
  const proof = await stepUp(app, accessToken, { password });
  if (proof.status !== 200) throw new Error(`POST /sessions/current/step-up answered ${proof.status}: ${proof.text}`);
}

/**
 * Enrols an authenticator app for the bearer of `accessToken`: its secret and the recovery codes.
 * Enrolling is a sensitive change: with `password`, a session without a fresh proof steps up with it first.
 */
export async function enrolTotp(app: App, accessToken: string, clock: Clock, password?: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  let started = await request(app).post('/me/totp').set('authorization', `Bearer ${accessToken}`);
  if (started.status === 403 && started.body.code === 'step_up_required' && password !== undefined) {
    await steppedUp(app, accessToken, password);
    started = await request(app).post('/me/totp').set('authorization', `Bearer ${accessToken}`);
  }
  if (started.status !== 201) throw new Error(`POST /me/totp answered ${started.status}: ${started.text}`);
  const secret = started.body.secret as string;
  const confirmed = await request(app).post('/me/totp/confirm').set('authorization', `Bearer ${accessToken}`).send({ totp_code: totpCode(secret, clock.now()) });
  if (confirmed.status !== 200) throw new Error(`POST /me/totp/confirm answered ${confirmed.status}: ${confirmed.text}`);
  return { secret, recoveryCodes: confirmed.body.recovery_codes as string[] };
}

/** The password step of a person with a second factor: the challenge token. */
export async function passwordStep(app: App, email: string, password: string): Promise<string> {
  const res = await request(app).post('/sessions').send({ session: { email, password } });
  if (res.status !== 202) throw new Error(`POST /sessions answered ${res.status}: ${res.text}`);
  return res.body.second_factor.challenge_token as string;
}

export function secondStep(app: App, body: { challenge_token: string; totp_code?: string; recovery_code?: string }) {
  return request(app).post('/sessions/second-factor').send(body);
}

/** Both steps with a TOTP code at the clock's time. */
export async function signInWithTotp(app: App, person: { email: string; password: string }, secret: string, clock: Clock): Promise<TokenSetBody> {
  const challenge_token = await passwordStep(app, person.email, person.password);
  const res = await secondStep(app, { challenge_token, totp_code: totpCode(secret, clock.now()) });
  if (res.status !== 201) throw new Error(`POST /sessions/second-factor answered ${res.status}: ${res.text}`);
  return res.body as TokenSetBody;
}
