// The real OpenID Provider of the tests: the `oidc-provider` package (a certified implementation),
// started on loopback with one client for this service and accounts the test chooses, its
// development login page (any password) standing for the company's. `signInAt` plays the
// person's browser through it, cookies and redirects included, up to the redirect URI.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';

export interface Account {
  email: string;
  email_verified: boolean;
  given_name?: string;
  family_name?: string;
  groups?: string[];
}

export interface RealProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, Account>;
  close(): Promise<void>;
}

export async function startRealProvider(redirectUri: string): Promise<RealProvider> {
  const accounts = new Map<string, Account>();
  const clientId = 'backoffice';
  const clientSecret = randomBytes(24).toString('hex');
  let handler: Parameters<typeof createServer>[1] = (_req, res) => res.end();
  const server: Server = createServer((req, res) => handler!(req, res));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name'], groups: ['groups'] },
    // The claims in the ID token itself: the relying party reads no userinfo.
    conformIdTokenClaims: false,
    findAccount: (_ctx, sub) => {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: () => ({ sub, ...account }) };
    },
    // The client is the company's own application: no consent screen, the scopes asked are granted.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile groups');
      await grant.save();
      return grant;
    },
  });
  handler = provider.callback();
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

/**
 * The person's browser at the provider: follows its redirects and submits its login form as
 * `login`, until the provider sends it to `redirectUri`; that URL (code, state, iss).
 */
export async function signInAt(authorizationUrl: string, redirectUri: string, login: string): Promise<URL> {
  const cookies = new Map<string, string>();
  const remember = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
  };
  const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  let url = new URL(authorizationUrl);
  let init: RequestInit = {};
  for (let step = 0; step < 20; step += 1) {
    if (url.href.startsWith(redirectUri)) return url;
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: cookieHeader() } });
    remember(res);
    init = {};
    const location = res.headers.get('location');
    if (location) {
      url = new URL(location, url);
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`the provider answered ${res.status} without a form: ${html.slice(0, 500)}`);
    const form = new URLSearchParams();
    for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) form.set(name!, value!);
    if (html.includes('name="login"')) {
      form.set('login', login);
      form.set('password', 'any password: this is the development login page');
    }
    url = new URL(action.replace(/&amp;/g, '&'), url);
    init = { method: 'POST', body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('the provider did not send the browser back');
}
