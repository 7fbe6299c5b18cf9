// The partner's client: openapi-fetch typed by the contract in the chosen key style, sending every
// request through the rules of transport.ts, plus iterators over the cursor-paged lists and over
// the event feed.
import createFetchClient, { type Client, type MaybeOptionalInit } from 'openapi-fetch';
import { createTransport, type RetryOptions, type Tokens } from './transport.js';
import type { Paths, Style, WebhookEvent, EventType } from './styles.js';

/** A token set in any key style (what `POST /sessions` answers), or the client's own shape. */
export type TokenSetLike =
  | Tokens
  | { access_token: string; refresh_token: string; expires_in?: number }
  | { 'access-token': string; 'refresh-token': string; 'expires-in'?: number }
  | { AccessToken: string; RefreshToken: string; ExpiresIn?: number };

export interface ClientOptions<S extends Style> {
  /** Where the service is: `https://backoffice.example.com`, `http://localhost:3000`. */
  baseUrl: string;
  /** The key style of every body, sent as `x-api-inflection` (default `camel`). */
  style?: S;
  /** An API key (`bok_...`), sent as `x-api-key`. */
  apiKey?: string;
  /** A person's token set: sent as `Authorization: Bearer`, refreshed at `POST /tokens` when refused or about to end. */
  tokens?: TokenSetLike;
  /** Every new token set, to store (each refresh token is usable once). */
  onTokens?: (tokens: Tokens) => void | Promise<void>;
  retry?: RetryOptions;
  /** Send the ETag last read of a resource as If-Match on its PATCH and DELETE (default true). */
  ifMatch?: boolean;
  /** Another fetch (a proxy agent, a test's). */
  fetch?: (request: Request) => Promise<Response>;
}

type Json200<Op> = Op extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;
type ItemsOf<B> = B extends { data: (infer T)[] } ? T : B extends { Data: (infer T)[] } ? T : never;
type CursorPaged<Op> = Op extends { parameters: { query?: infer Q } } ? ('cursor' extends keyof NonNullable<Q> ? true : false) : false;
/** The paths whose GET is a list paged by `cursor`. */
export type ListPath<P> = {
  [K in keyof P]: P[K] extends { get: infer Op } ? (CursorPaged<Op> extends true ? ([ItemsOf<Json200<Op>>] extends [never] ? never : K) : never) : never;
}[keyof P];
/** What a list yields. */
export type ListItem<P, K extends keyof P> = P[K] extends { get: infer Op } ? ItemsOf<Json200<Op>> : never;

export interface EventsOptions {
  /** A `next_cursor` stored from an earlier run: the events after it. Omitted: from the oldest kept (30 days). */
  after?: string;
  /** Only these types (the cursor is bound to them: resume with the same list). */
  types?: EventType[];
  /** Events per page, 1 to 200 (default 200). */
  limit?: number;
  /** Keep polling when the feed is exhausted, every `pollIntervalMs` (default 1 s), until `signal` aborts. */
  follow?: boolean;
  pollIntervalMs?: number;
  signal?: AbortSignal;
}

/**
 * One event of the feed, and where to resume once it is handled: store `cursor` and pass it as
 * `after` next time. Mid-page it is the page's start (resuming repeats the events before this one
 * on its page: deduplicate by `id`; `undefined`: from the oldest), at a page's end the page's
 * `next_cursor`. So never a gap, at most a repeat.
 */
export interface FeedItem<S extends Style> {
  event: WebhookEvent<S>;
  cursor: string | undefined;
}

export type BackofficeClient<S extends Style> = Client<Paths<S>> & {
  readonly style: S;
  /** Every item of a cursor-paged list, page after page (`limit` sets the page size). */
  list<K extends ListPath<Paths<S>>>(path: K, init?: MaybeOptionalInit<Paths<S>[K], 'get'>): AsyncIterableIterator<ListItem<Paths<S>, K>>;
  /** The event feed (`GET /events`) from a stored cursor on. */
  events(options?: EventsOptions): AsyncIterableIterator<FeedItem<S>>;
  /** The token set in use, after any refresh. */
  tokens(): Tokens | undefined;
  /** The ETag the client will send as If-Match for a resource path (`/tasks/<id>`). */
  etagOf(path: string): string | undefined;
};

function normalizeTokens(set: TokenSetLike | undefined): Tokens | undefined {
  if (!set) return undefined;
  const record = set as Record<string, unknown>;
  const pick = (...names: string[]) => names.map((name) => record[name]).find((value) => value !== undefined);
  const accessToken = pick('accessToken', 'access_token', 'access-token', 'AccessToken');
  const refreshToken = pick('refreshToken', 'refresh_token', 'refresh-token', 'RefreshToken');
  const expiresIn = pick('expiresIn', 'expires_in', 'expires-in', 'ExpiresIn');
  const expiresAt = pick('expiresAt');
  if (typeof accessToken !== 'string' || typeof refreshToken !== 'string') throw new TypeError('tokens: an access token and a refresh token are needed');
  return {
    accessToken,
    refreshToken,
    expiresAt: typeof expiresAt === 'number' ? expiresAt : typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : undefined,
  };
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

type Loose = { GET(path: string, init?: unknown): Promise<{ data?: unknown; response: Response }> };

/** A client of the back-office API. Every refusal is thrown as an ApiError (see errors.ts); `data` is there whenever a call returns. */
export function createClient<S extends Style = 'camel'>(options: ClientOptions<S>): BackofficeClient<S> {
  const style = (options.style ?? 'camel') as S;
  const transport = createTransport({
    baseUrl: options.baseUrl,
    style,
    apiKey: options.apiKey,
    tokens: normalizeTokens(options.tokens),
    onTokens: options.onTokens,
    retry: options.retry,
    ifMatch: options.ifMatch,
    fetch: options.fetch,
  });
  const schemaPaths = new WeakMap<Request, string>();
  const api = createFetchClient<Paths<S>>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    // The contract's array filters (`types`, `status`, `type`) are comma-separated (form, explode: false).
    querySerializer: { array: { style: 'form', explode: false } },
    fetch: (request: Request) => transport.fetch(request, schemaPaths.get(request)),
  });
  api.use({
    onRequest({ request, schemaPath }) {
      schemaPaths.set(request, schemaPath);
      return undefined;
    },
  });
  const loose = api as unknown as Loose;

  async function* list(path: string, init?: { params?: { query?: Record<string, unknown> } } & Record<string, unknown>) {
    let cursor = init?.params?.query?.cursor as string | undefined;
    for (;;) {
      const { data } = await loose.GET(path, { ...init, params: { ...init?.params, query: { ...init?.params?.query, cursor } } });
      const page = data as Record<string, unknown>;
      const items = (page.data ?? page.Data) as unknown[];
      yield* items;
      const next = page.next_cursor ?? page.nextCursor ?? page['next-cursor'] ?? page.NextCursor;
      if (typeof next !== 'string' || next === '') return;
      cursor = next;
    }
  }

  async function* events(feed: EventsOptions = {}): AsyncIterableIterator<FeedItem<S>> {
    const limit = feed.limit ?? 200;
    let position = feed.after;
    for (;;) {
      const { data } = await loose.GET('/events', { params: { query: { after: position, types: feed.types, limit } }, signal: feed.signal });
      const page = data as Record<string, unknown>;
      const items = (page.data ?? page.Data) as WebhookEvent<S>[];
      const next = (page.next_cursor ?? page.nextCursor ?? page['next-cursor'] ?? page.NextCursor) as string;
      // Resuming from the page's own start repeats at most the events before (deduplicate by id); from its end, none.
      for (let i = 0; i < items.length; i++) yield { event: items[i]!, cursor: i === items.length - 1 ? next : position };
      position = next;
      if (items.length < limit) {
        if (!feed.follow) return;
        await sleep(feed.pollIntervalMs ?? 1000, feed.signal);
      }
    }
  }

  return Object.assign(api, {
    style,
    list: list as BackofficeClient<S>['list'],
    events,
    tokens: transport.tokens,
    etagOf: transport.etagOf,
  });
}
