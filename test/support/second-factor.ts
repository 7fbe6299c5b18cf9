// Second factors in tests: enrolling an authenticator app through the API and computing its codes
// as the app would (RFC 6238, at the test's clock), and the second step of signing in.
import request from 'supertest';
import { Secret, TOTP } from 'otpauth';
import type { Clock } from '../../src/clock.js';
import type { TokenSetBody } from './sessions.js';
type App = Parameters<typeof request>[0];

/** The code an authenticator app holding `secret` (base32) shows at `at`. */
export function totpCode(secret: string, at: Date): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: at.getTime() });
}

/** Enrols an authenticator app for the bearer of `accessToken`: its secret and the recovery codes. */
export async function enrolTotp(app: App, accessToken: string, clock: Clock): Promise<{ secret: string; recoveryCodes: string[] }> {
  const started = await request(app).post('/me/totp').set('authorization', `Bearer ${accessToken}`);
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
