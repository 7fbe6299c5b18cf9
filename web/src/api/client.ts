// The one way the interface talks to the service: openapi-fetch typed from the same generated spec
// the server validates against, with the bearer token added and refreshed as needed.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '../../../generated/openapi.js';
import { ApiError } from './problem.js';
import { TokenKeeper, STORAGE_KEY } from './tokens.js';

const baseUrl = window.location.origin;

/** Used for the refresh itself, which carries its own Authorization header. */
const bare = createClient<paths>({ baseUrl });

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

export const api = createClient<paths>({ baseUrl });
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
  let result = await run();
  if (result.response.status === 401 && tokens.signedIn) {
    await tokens.refreshAfterRejection(sentAt);
    result = await run();
  }
  if (result.response.status === 403 && stepUpPrompt) {
    const refusal = new ApiError(result.response, result.error);
    if (refusal.problem?.code === 'step_up_required' && (await stepUpPrompt(refusal.problem.step_up_methods ?? ['password']))) result = await run();
  }
  if (!result.response.ok) throw new ApiError(result.response, result.error);
  return result.data as Exclude<R['data'], undefined>;
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
