// Where the service may call an identity provider. An administrator names the issuer, and its
// discovery document names the token endpoint and the keys' URL: each is a request this server
// makes, so each could be pointed into the server's own network (server-side request forgery).
// The rule is the webhooks' (src/webhooks/ssrf.ts, the same address classification): `https` to
// public addresses only; OIDC_ALLOW_INSECURE_ISSUERS=true (development and tests, refused in
// production) also allows plain `http` and private addresses (loopback, RFC 1918, ...); cloud
// metadata addresses are refused whatever the setting. Judged twice, as for webhooks: the issuer
// when a provider is saved or discovered (every address its host resolves to, for a clear
// answer), and every request on the address actually connected to, through `providerFetch`
// (openid-client's customFetch), so an endpoint of the discovery document on a private address
// and a name that resolves elsewhere later (DNS rebinding) get nowhere either.
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup } from 'node:dns';
import { isIP, type Socket } from 'node:net';
import type * as client from 'openid-client';
import { addressAllowed, classifyAddress, guardedLookup, type UrlPolicy } from '../../webhooks/ssrf.js';

/** OIDC_ALLOW_INSECURE_ISSUERS. */
export interface IssuerPolicy {
  allowInsecure: boolean;
}

/** Why an issuer may not be called: `reason` completes "The issuer ..."; `allowedWhenInsecure`: the development setting would allow it. */
export class IssuerRefusedError extends Error {
  override name = 'IssuerRefusedError';
  constructor(
    readonly reason: string,
    readonly allowedWhenInsecure: boolean,
  ) {
    super(`The issuer ${reason}.`);
  }
}

const urlPolicyOf = (policy: IssuerPolicy): UrlPolicy => ({ allowPrivate: policy.allowInsecure });

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Every address of a host name; none when it does not resolve (discovery then fails as unreachable). */
function addressesOf(host: string): Promise<string[]> {
  if (isIP(host)) return Promise.resolve([host]);
  return new Promise((resolve) => dnsLookup(host, { all: true }, (err, found) => resolve(err ? [] : found.map((a) => a.address))));
}

/** Throws IssuerRefusedError when the issuer may not be called under the policy (resolves its host). */
export async function assertIssuerAllowed(issuer: URL, policy: IssuerPolicy): Promise<void> {
  if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && policy.allowInsecure)) {
    throw new IssuerRefusedError('must use https', issuer.protocol === 'http:');
  }
  for (const address of await addressesOf(hostOf(issuer))) {
    if (addressAllowed(address, urlPolicyOf(policy))) continue;
    if (classifyAddress(address) === 'metadata') throw new IssuerRefusedError(`resolves to ${address}, a cloud metadata address, which the service never calls`, false);
    throw new IssuerRefusedError(`resolves to ${address}, an address that is not public (loopback, private, link-local or shared)`, true);
  }
}

/** The largest answer read from a provider: discovery documents and key sets are a few kilobytes. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** Statuses whose answer has no body (a Response refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A request to the provider that failed (not connected, refused here, cut short): a TypeError, as
 * fetch reports one (openid-client passes it on as it is), of its own class, so that
 * src/auth/identity-providers/oidc.ts tells "the provider could not be reached" from a TypeError
 * that is a bug of ours.
 */
export class ProviderRequestError extends TypeError {
  override name = 'ProviderRequestError';
}

/** A refusal as fetch reports a failed request. */
const refused = (why: string) => new ProviderRequestError(`fetch refused: ${why}`);

/**
 * A fetch for openid-client (its customFetch) that connects only where the policy allows: node's
 * http client through agents whose lookup refuses a name with any refused address, an address
 * written in the URL judged before connecting, and each socket's remote address judged once
 * connected. No redirect is followed (openid-client asks `redirect: 'manual'`, and a 3xx is
 * answered as it is); answers over MAX_ANSWER_BYTES or compressed fail.
 */
export function providerFetch(policy: IssuerPolicy): client.CustomFetch {
  const urlPolicy = urlPolicyOf(policy);
  const lookup = guardedLookup(urlPolicy) as unknown as http.AgentOptions['lookup'];
  const agents = { 'http:': new http.Agent({ lookup } as http.AgentOptions), 'https:': new https.Agent({ lookup } as https.AgentOptions) };
  return async (url, options) => {
    const target = new URL(url);
    const agent = target.protocol === 'https:' || target.protocol === 'http:' ? agents[target.protocol] : undefined;
    if (!agent || (target.protocol === 'http:' && !policy.allowInsecure)) throw refused(`${target.origin} is not https`);
    if (isIP(hostOf(target)) && !addressAllowed(hostOf(target), urlPolicy)) throw refused(`${hostOf(target)} is not a public address`);
    // Any body fetch takes (a string, URLSearchParams, bytes), as fetch would send it, with its default type.
    const encoded = options.body === undefined || options.body === null ? undefined : new Response(options.body);
    const body = encoded ? Buffer.from(await encoded.arrayBuffer()) : undefined;
    const headers = new Headers(options.headers);
    const defaultType = encoded?.headers.get('content-type');
    if (defaultType && !headers.has('content-type')) headers.set('content-type', defaultType);
    if (body) headers.set('content-length', String(body.length));
    headers.set('accept-encoding', 'identity');
    const signal = options.signal;
    signal?.throwIfAborted();
    return new Promise<Response>((resolve, reject) => {
      const request = (target.protocol === 'https:' ? https : http).request(target, { method: options.method, headers: Object.fromEntries(headers), agent });
      const onAbort = () => request.destroy(signal!.reason as Error);
      signal?.addEventListener('abort', onAbort, { once: true });
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      const fail = (err: Error) => settle(() => reject(signal?.aborted ? signal.reason : err instanceof ProviderRequestError ? err : new ProviderRequestError('fetch failed', { cause: err })));
      request.on('socket', (socket: Socket) => {
        const check = () => {
          if (socket.remoteAddress && !addressAllowed(socket.remoteAddress, urlPolicy)) request.destroy(refused(`connected to ${socket.remoteAddress}, not a public address`));
        };
        if (socket.remoteAddress) check();
        else socket.once('connect', check);
      });
      request.on('error', fail);
      request.on('response', (answer) => {
        answer.on('error', fail);
        // After 'end' this changes nothing (settled); before it, the answer was cut.
        answer.on('close', () => fail(new ProviderRequestError('fetch failed: the answer was cut short')));
        const encoding = answer.headers['content-encoding'];
        if (encoding && encoding !== 'identity') return answer.destroy(refused(`the answer is compressed (${encoding})`));
        const chunks: Buffer[] = [];
        let size = 0;
        answer.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) return answer.destroy(refused(`the answer is over ${MAX_ANSWER_BYTES} bytes`));
          chunks.push(chunk);
        });
        answer.on('end', () => {
          const status = answer.statusCode ?? 0;
          const responseHeaders = new Headers();
          for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) responseHeaders.append(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!);
          try {
            const response = new Response(NULL_BODY.has(status) ? null : Buffer.concat(chunks), { status, statusText: answer.statusMessage ?? '', headers: responseHeaders });
            settle(() => resolve(response));
          } catch (err) {
            fail(err as Error);
          }
        });
      });
      request.end(body);
    });
  };
}
