// The one way the interface talks to the service: the partners' client (clients/typescript), so
// the back office runs on the client partners get and exercises it every day: an Idempotency-Key on
// every create kept across its retries, retries of only what is safe, typed problems. What is the
// back office's own: the bearer token kept in this browser and shared by its tabs (tokens.ts), the
// step-up prompt, and If-Match sent only from the tag the form read (the client's memory of tags is
// off). Its problems are turned into the page's ApiError, whose wording is the person's language.
import createFetchClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '../../../generated/openapi.js';
import { createClient, ApiError as ClientError, NetworkError } from '../../../clients/typescript/src/index.js';
import { ApiError } from './problem.js';
import { TokenKeeper, STORAGE_KEY } from './tokens.js';

const baseUrl = window.location.origin;

/** Used for the refresh itself, which carries its own Authorization header and must not be retried. */
const bare = createFetchClient<paths>({ baseUrl });

export const tokens = new TokenKeeper({
  store: window.localStorage,
  lock: 'locks' in navigator ? (name, task) => navigator.locks.request(name, task) as Promise<Awaited<ReturnType<typeof task>>> : undefined,
  refresh: async (current) => {
    try {
      const { data, error, response } = await bare.POST('/tokens', {
        headers: { Authorization: `Bearer ${current.accessToken}` },
        body: { refresh_token: current.refreshToken },
      });
      if (data) return { ok: true, tokenSet: data };
      // 401: the session is revoked, ended, or the refresh token was replayed; 400: it is malformed.
      return { ok: false, final: response.status === 401 || response.status === 400, error: new ApiError(response, error) };
    } catch (networkError) {
      return { ok: false, final: false, error: networkError };
    }
  },
});

window.addEventListener('storage', (event) => {
  if (event.key === STORAGE_KEY) tokens.storageChanged();
});
// Timers sleep in background tabs: check the token as soon as the tab is looked at again.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') tokens.accessToken().catch(() => undefined);
});

const bearer: Middleware = {
  async onRequest({ request }) {
    const token = await tokens.accessToken();
    if (token) request.headers.set('Authorization', `Bearer ${token}`);
    return request;
  },
};

// A person waits at most a couple of seconds for a retry; a longer Retry-After is shown to them (describeError).
export const api = createClient({ baseUrl, style: 'snake', ifMatch: false, retry: { maxRetries: 2, maxDelayMs: 2_000 } });
api.use(bearer);

type Result = { data?: unknown; error?: unknown; response: Response };

/** What a session can prove itself with (the contract's StepUpMethod). */
export type StepUpMethod = NonNullable<ApiError['problem']>['step_up_methods'] extends (infer M)[] | undefined ? M : never;

/** Asks the person for a fresh proof and presents it; true once the session holds one, false if they cancel. */
type StepUpPrompt = (methods: StepUpMethod[]) => Promise<boolean>;
let stepUpPrompt: StepUpPrompt | undefined;

/** The one place that asks for a step-up (the StepUpDialog of the signed-in shell); undefined when none is shown. */
export function setStepUpPrompt(prompt: StepUpPrompt | undefined): void {
  stepUpPrompt = prompt;
}

/**
 * Runs one call. A 401 while signed in means the access token was refused: refresh once (shared
 * with any refresh in flight) and retry. A 403 step_up_required (a sensitive change, docs/AUTH.md
 * "Step-up") asks the person for a code (or their password) and retries once it is accepted.
 * Returns the data, or throws ApiError / SessionEndedError.
 */
export async function call<R extends Result>(run: () => Promise<R>): Promise<Exclude<R['data'], undefined>> {
  const sentAt = Date.now();
  let result = await settle(run);
  if (result instanceof ApiError && result.status === 401 && tokens.signedIn) {
    await tokens.refreshAfterRejection(sentAt);
    result = await settle(run);
  }
  if (result instanceof ApiError && result.status === 403 && stepUpPrompt) {
    if (result.problem?.code === 'step_up_required' && (await stepUpPrompt(result.problem.step_up_methods ?? ['password']))) result = await settle(run);
  }
  if (result instanceof ApiError) throw result;
  if (!result.response.ok) throw new ApiError(result.response, result.error);
  return result.data as Exclude<R['data'], undefined>;
}

/** The call's result, or the client's refusal as the page's ApiError; a request without an answer throws a TypeError (describeError: "cannot reach"). */
async function settle<R extends Result>(run: () => Promise<R>): Promise<R | ApiError> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ClientError) return new ApiError({ status: error.status, headers: error.headers }, error.problem);
    if (error instanceof NetworkError) throw new TypeError(error.message, { cause: error });
    throw error;
  }
}

/** One resource and its entity tag (RFC 9110 ETag), to send back in If-Match when changing it. */
export interface Tagged<T> {
  data: T;
  etag: string;
}

/** Runs one call (as call()) on a single resource, keeping the ETag it answers (docs/SAFE-WRITES.md). */
export async function callTagged<R extends Result>(run: () => Promise<R>): Promise<Tagged<Exclude<R['data'], undefined>>> {
  let etag = '';
  const data = await call(async () => {
    const result = await run();
    etag = result.response.headers.get('ETag') ?? '';
    return result;
  });
  return { data, etag };
}

/** The If-Match header of a change made to what was read with this tag (none when the read had none). */
export const ifMatch = (etag: string): { 'If-Match'?: string } => (etag ? { 'If-Match': etag } : {});

/** The change was refused because someone else changed the record since it was read (412): nothing was saved. */
export const changedMeanwhile = (error: unknown) => error instanceof ApiError && error.status === 412;

/** Ends this session on the server (DELETE /sessions/current), then forgets the tokens here. */
export async function signOut(): Promise<void> {
  try {
    await call(() => api.DELETE('/sessions/current'));
  } finally {
    tokens.end('signed_out');
  }
}
