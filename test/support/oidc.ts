// OpenID Providers for the tests, on loopback: a hand-made one (node:crypto keys, every answer
// chosen by the test, so it can forge what a real provider never would: a token signed by another
// key, expired, for another audience or from another issuer, with a wrong nonce), and the real
// `oidc-provider` package (test/support/oidc-provider.ts).
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';

type App = Parameters<typeof request>[0];

export interface IdTokenClaims {
  sub: string;
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  groups?: string[];
  amr?: string[];
  acr?: string;
  [claim: string]: unknown;
}

/** What the test may forge in the ID token of one code. */
export interface Forgery {
  /** Sign with a key the provider does not publish (same key id). */
  otherKey?: boolean;
  /** Seconds from now of `exp` (negative: expired). */
  expiresIn?: number;
  aud?: string;
  iss?: string;
  nonce?: string;
}

const base64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

function signJwt(payload: Record<string, unknown>, key: KeyObject, kid: string): string {
  const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }));
  const body = base64url(JSON.stringify(payload));
  return `${header}.${body}.${base64url(sign('sha256', Buffer.from(`${header}.${body}`), key))}`;
}

export interface HandMadeProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What the person does at the provider: signs in as `claims`; the code the provider sends back to the redirect URI. */
  authorize(authorizationUrl: string, claims: IdTokenClaims, forgery?: Forgery): { code: string; state: string; iss: string };
  /** Codes redeemed at the token endpoint, and refused there. */
  redeemed: number;
  close(): Promise<void>;
}

/** `discovery`: changes the provider's discovery document before it is served (a broken provider). */
export async function startHandMadeProvider(options: { discovery?: (document: Record<string, unknown>) => void } = {}): Promise<HandMadeProvider> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const kid = randomBytes(8).toString('hex');
  const clientId = 'backoffice-test';
  const clientSecret = randomBytes(16).toString('hex');
  const codes = new Map<string, { claims: IdTokenClaims; forgery: Forgery; nonce: string; challenge: string; redirectUri: string; used: boolean }>();
  let issuer = '';
  const provider: HandMadeProvider = {
    issuer: '',
    clientId,
    clientSecret,
    redeemed: 0,
    authorize(authorizationUrl, claims, forgery = {}) {
      const url = new URL(authorizationUrl);
      const p = url.searchParams;
      if (p.get('client_id') !== clientId || p.get('response_type') !== 'code' || p.get('code_challenge_method') !== 'S256') throw new Error(`unexpected authorization request ${authorizationUrl}`);
      const code = randomBytes(16).toString('hex');
      codes.set(code, { claims, forgery, nonce: p.get('nonce')!, challenge: p.get('code_challenge')!, redirectUri: p.get('redirect_uri')!, used: false });
      return { code, state: p.get('state')!, iss: issuer };
    },
    close: () => new Promise((done) => server.close(() => done())),
  };
  const server: Server = createServer((req, res) => {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', issuer);
    if (req.method === 'GET' && url.pathname === '/.well-known/openid-configuration') {
      const document: Record<string, unknown> = {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        authorization_response_iss_parameter_supported: true,
      };
      options.discovery?.(document);
      return json(200, document);
    }
    if (req.method === 'GET' && url.pathname === '/jwks') return json(200, { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] });
    if (req.method === 'POST' && url.pathname === '/token') {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        const form = new URLSearchParams(text);
        const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
        const [id, secret] = basic.split(':').map(decodeURIComponent);
        if (id !== clientId || secret !== clientSecret) return json(401, { error: 'invalid_client' });
        const grant = codes.get(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (!grant || grant.used || form.get('redirect_uri') !== grant.redirectUri || createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) {
          if (grant) grant.used = true;
          return json(400, { error: 'invalid_grant', error_description: 'grant request is invalid' });
        }
        grant.used = true;
        provider.redeemed += 1;
        const now = Math.floor(Date.now() / 1000);
        const { forgery } = grant;
        const payload = {
          iss: forgery.iss ?? issuer,
          aud: forgery.aud ?? clientId,
          iat: now,
          exp: now + (forgery.expiresIn ?? 300),
          nonce: forgery.nonce ?? grant.nonce,
          ...grant.claims,
        };
        const idToken = signJwt(payload, forgery.otherKey ? other : privateKey, kid);
        return json(200, { access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: idToken });
      });
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider.issuer = issuer;
  return provider;
}

/** Adds a provider through the API as `token`'s holder; its id. */
export async function addProvider(app: App, token: string, fields: Record<string, unknown>): Promise<string> {
  const res = await request(app).post('/identity-providers').set('authorization', `Bearer ${token}`).send(fields);
  if (res.status !== 201) throw new Error(`adding a provider answered ${res.status}: ${res.text}`);
  return res.body.id as string;
}

/** Starts a sign-in as a browser would, by e-mail or provider id. */
export async function startSignIn(app: App, by: { email: string } | { provider_id: string }) {
  const res = await request(app).post('/sessions/oidc').send(by);
  if (res.status !== 201) throw new Error(`starting answered ${res.status}: ${res.text}`);
  return res.body as { authorization_url: string; flow_token: string; expires_in: number; provider: { id: string; name: string } };
}
