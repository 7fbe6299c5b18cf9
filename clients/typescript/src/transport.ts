// The service's rules, applied to every request the client sends (a fetch function handed to
// openapi-fetch): credentials, the key style, an Idempotency-Key on every create kept across its
// own retries, the ETag read sent back as If-Match, retries of only what is safe, and every
// refusal thrown as a typed problem. References: docs/SAFE-WRITES.md, docs/PARTNER-KEYS.md.
import { IDEMPOTENT_OPERATIONS } from './contract/operations.js';
import { errorFor, NetworkError, type ProblemBody } from './errors.js';

export type KeyStyle = 'camel' | 'snake' | 'dash' | 'pascal';

/** A login token set (what `POST /sessions` and `POST /tokens` answer, in any key style). */
export interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** When the access token ends (ms since the epoch), if known: the client refreshes shortly before. */
  expiresAt?: number;
}

export interface RetryOptions {
  /** Retries after the first attempt (default 4). */
  maxRetries?: number;
  /** First backoff step without a hint from the service (default 200 ms), doubled each time, jittered. */
  baseDelayMs?: number;
  /** The longest single wait; a Retry-After beyond it is not waited out but thrown (default 60 s). */
  maxDelayMs?: number;
}

export interface TransportOptions {
  baseUrl: string;
  style: KeyStyle;
  apiKey?: string;
  tokens?: Tokens;
  /** Called with every new token set (store the refresh token: each is usable once). */
  onTokens?: (tokens: Tokens) => void | Promise<void>;
  retry?: RetryOptions;
  /** Remember the ETag of each resource read and send it as If-Match on its PATCH and DELETE (default true). */
  ifMatch?: boolean;
  fetch?: (request: Request) => Promise<Response>;
  /** For tests: where waits go (default setTimeout). */
  sleep?: (ms: number, signal?: AbortSignal | null) => Promise<void>;
  random?: () => number;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const ETAG_MEMORY = 1000;

/**
 * Throws unless `value` can be sent as a header value, without repeating it: fetch's own refusal
 * quotes the whole value (an API key with a line break inside, two lines of a file read whole).
 */
function assertSendable(what: string, value: string): void {
  try {
    new Headers().set('x-check', value);
  } catch {
    throw new TypeError(`${what} cannot be sent as an HTTP header value (a line break, a NUL or a character beyond U+00FF inside it); it is not repeated here`);
  }
}

function sleeping(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/** Seconds from `Retry-After` (delta-seconds or an HTTP date), else from the `RateLimit` field's `t`. */
export function serverWaitMs(headers: Headers, now = Date.now()): number | undefined {
  const retryAfter = headers.get('retry-after');
  if (retryAfter !== null) {
    if (/^\d+$/.test(retryAfter.trim())) return Number(retryAfter.trim()) * 1000;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const rateLimit = headers.get('ratelimit');
  const reset = rateLimit ? /(?:^|;)\s*t=(\d+)/.exec(rateLimit) : null;
  if (reset) return Number(reset[1]) * 1000;
  return undefined;
}

async function problemOf(response: Response): Promise<ProblemBody | undefined> {
  try {
    const text = await response.text();
    const body: unknown = text ? JSON.parse(text) : undefined;
    return body && typeof body === 'object' && !Array.isArray(body) ? (body as ProblemBody) : undefined;
  } catch {
    return undefined;
  }
}

export interface Transport {
  fetch(request: Request, schemaPath?: string): Promise<Response>;
  /** The token set in use (after any refresh). */
  tokens(): Tokens | undefined;
  /** The ETag remembered for a resource path (`/tasks/<id>`), if any. */
  etagOf(path: string): string | undefined;
}

export function createTransport(options: TransportOptions): Transport {
  const rawFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const sleep = options.sleep ?? sleeping;
  const random = options.random ?? Math.random;
  const maxRetries = options.retry?.maxRetries ?? 4;
  const baseDelayMs = options.retry?.baseDelayMs ?? 200;
  const maxDelayMs = options.retry?.maxDelayMs ?? 60_000;
  const rememberTags = options.ifMatch ?? true;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const basePath = new URL(baseUrl).pathname.replace(/\/+$/, '');
  // The API answers no redirect, and fetch would follow one with `x-api-key` (and a 307/308's body:
  // a refresh token) to whatever origin it names (a proxy, a moved deployment): none is followed, a
  // 3xx is answered as it came (thrown as an ApiError; a browser answers it as status 0, opaque).
  const baseFetch = (request: Request) => rawFetch(new Request(request, { redirect: 'manual' }));
  if (options.apiKey) assertSendable('apiKey', options.apiKey);
  if (options.tokens) assertSendable('tokens.accessToken', options.tokens.accessToken);
  let tokens = options.tokens ? { ...options.tokens } : undefined;
  let refreshing: Promise<void> | undefined;
  const etags = new Map<string, string>();

  const resourcePath = (url: string) => {
    const path = new URL(url, baseUrl).pathname;
    return path.startsWith(basePath) ? path.slice(basePath.length) || '/' : path;
  };
  const remember = (path: string, tag: string | null) => {
    if (!rememberTags) return;
    etags.delete(path);
    if (tag === null) return;
    etags.set(path, tag);
    if (etags.size > ETAG_MEMORY) etags.delete(etags.keys().next().value!);
  };

  /** POST /tokens once for every caller that found the same access token refused: never two refreshes at once. */
  function refresh(refused: string): Promise<void> {
    if (!tokens) return Promise.reject(new Error('no token set to refresh'));
    if (tokens.accessToken !== refused) return Promise.resolve(); // someone refreshed meanwhile
    refreshing ??= (async () => {
      const current = tokens!;
      const url = `${baseUrl}/tokens`;
      let response: Response;
      try {
        response = await baseFetch(
          new Request(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${current.accessToken}` },
            body: JSON.stringify({ refresh_token: current.refreshToken }),
          }),
        );
      } catch (cause) {
        throw new NetworkError({ method: 'POST', url }, cause);
      }
      if (response.status !== 201) throw errorFor(response, await problemOf(response), { method: 'POST', url });
      const set = (await response.json()) as { access_token: string; refresh_token: string; expires_in: number };
      tokens = { accessToken: set.access_token, refreshToken: set.refresh_token, expiresAt: Date.now() + set.expires_in * 1000 };
      await options.onTokens?.({ ...tokens });
    })().finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  }

  async function send(original: Request, schemaPath: string | undefined): Promise<Response> {
    const method = original.method.toUpperCase();
    const url = original.url;
    const path = resourcePath(url);
    const headers = new Headers(original.headers);
    headers.set('x-api-inflection', options.style);
    if (options.apiKey) headers.set('x-api-key', options.apiKey);
    const template = schemaPath ?? path;
    const idempotent = IDEMPOTENT_OPERATIONS.has(`${method} ${template}`);
    if (idempotent && !headers.has('idempotency-key')) headers.set('idempotency-key', globalThis.crypto.randomUUID());
    if ((method === 'PATCH' || method === 'DELETE') && !headers.has('if-match')) {
      const tag = etags.get(path);
      if (tag) headers.set('if-match', tag);
    }
    const body = original.body === null ? undefined : await original.arrayBuffer();
    const retrySafe = SAFE_METHODS.has(method) || headers.has('idempotency-key');
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      if (tokens && !options.apiKey) {
        if (tokens.expiresAt !== undefined && tokens.expiresAt - Date.now() < 30_000 && !refreshed) {
          refreshed = true;
          await refresh(tokens.accessToken);
        }
        headers.set('authorization', `Bearer ${tokens.accessToken}`);
      }
      const sentToken = tokens?.accessToken;
      let response: Response;
      try {
        response = await baseFetch(new Request(url, { method, headers, body, signal: original.signal }));
      } catch (cause) {
        if (original.signal.aborted) throw cause;
        if (!retrySafe || attempt >= maxRetries) throw new NetworkError({ method, url }, cause);
        await sleep(backoff(attempt), original.signal);
        continue;
      }
      if (response.status === 401 && tokens && !options.apiKey && !refreshed && sentToken) {
        refreshed = true;
        await response.body?.cancel();
        await refresh(sentToken);
        attempt--; // the retry after a refresh is not a retry of the service's refusal
        continue;
      }
      const retryable =
        response.status === 429 ||
        (response.status === 503 && retrySafe) ||
        (response.status === 409 && headers.has('idempotency-key') && response.headers.has('retry-after'));
      if (retryable && attempt < maxRetries) {
        const hint = serverWaitMs(response.headers);
        const wait = hint === undefined ? backoff(attempt) : hint + random() * Math.min(1000, 100 + hint * 0.1);
        if (wait <= maxDelayMs) {
          await response.body?.cancel();
          await sleep(wait, original.signal);
          continue;
        }
      }
      return finish(response, method, url, path);
    }
  }

  function backoff(attempt: number): number {
    return random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt); // full jitter
  }

  async function finish(response: Response, method: string, url: string, path: string): Promise<Response> {
    if (response.ok || response.status === 304) {
      const tag = response.headers.get('etag');
      if (method === 'DELETE') remember(path, null);
      else if (tag) {
        const location = response.headers.get('location');
        remember(method === 'POST' && location ? resourcePath(location) : path, tag);
      }
      return response;
    }
    // A 412 keeps the stale tag: the next change fails too until the resource is read again (never an untagged overwrite).
    throw errorFor(response, await problemOf(response), { method, url });
  }

  return {
    fetch: send,
    tokens: () => (tokens ? { ...tokens } : undefined),
    etagOf: (path) => etags.get(path),
  };
}
