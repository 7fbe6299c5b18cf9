// What the server says when something goes wrong, turned into one sentence for the person.
import type { components } from '../../../generated/openapi.js';
import { SessionEndedError } from './tokens.js';
import { dictionaries, type Language, type MessageKey } from '../messages.js';
import { DETAIL_SAYS_MORE } from '../problem.messages.js';

export type Problem = components['schemas']['Problem'];

/** An answer other than 2xx, with its problem+json body when the server sent one. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly problem: Problem | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(response: Pick<Response, 'status' | 'headers'>, body: unknown) {
    const problem = isProblem(body) ? body : undefined;
    super(problem?.detail ?? problem?.title ?? `HTTP ${response.status}`);
    this.status = response.status;
    this.problem = problem;
    const header = Number(response.headers.get('Retry-After'));
    this.retryAfterSeconds = problem?.retry_after ?? (Number.isFinite(header) && header > 0 ? header : undefined);
  }
}

function isProblem(body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && typeof (body as Problem).status === 'number' && typeof (body as Problem).code === 'string';
}

export type Translate = (key: 'error.forbidden' | 'error.outranked' | 'error.rateLimited' | 'error.network' | 'error.sessionEnded' | 'error.unknown' | 'error.invalidCode' | 'error.challengeExpired' | 'error.invalidPasskey' | 'error.secondFactorLocked' | 'error.passkeyCancelled' | 'error.stepUpRequired' | 'error.wrongPassword', params?: Record<string, string | number>) => string;

/**
 * 403 names the permission (or those the target holds beyond the caller's), 429 says how long to
 * wait, otherwise the problem's `code` in the person's `language` (web/src/problem.messages.ts),
 * else the problem's `detail` (a code the table does not know yet).
 */
export function describeError(error: unknown, t: Translate, language: Language = 'en'): string {
  if (error instanceof SessionEndedError) return t('error.sessionEnded');
  if (error instanceof ApiError) {
    if (error.status === 403 && error.problem?.code === 'target_outranks_caller') return t('error.outranked', { permissions: (error.problem.missing_permissions ?? []).join(', ') });
    if (error.status === 403 && error.problem?.required_permission) return t('error.forbidden', { permission: error.problem.required_permission });
    if (error.problem?.code === 'invalid_second_factor') return t('error.invalidCode');
    if (error.problem?.code === 'invalid_passkey') return t('error.invalidPasskey');
    if (error.problem?.code === 'second_factor_locked') return t('error.secondFactorLocked');
    if (error.problem?.code === 'invalid_challenge') return t('error.challengeExpired');
    if (error.problem?.code === 'step_up_required') return t('error.stepUpRequired');
    if (error.problem?.code === 'invalid_current_password') return t('error.wrongPassword');
    if (error.status === 429) return t('error.rateLimited', { seconds: error.retryAfterSeconds ?? 60 });
    const code = error.problem?.code;
    const known = code ? dictionaries[language][`problem.${code}` as MessageKey] : undefined;
    if (known && !(language === 'en' && error.problem?.detail && DETAIL_SAYS_MORE.has(code!))) return known;
    return error.problem?.detail ?? error.problem?.title ?? t('error.unknown', { status: error.status });
  }
  if (error instanceof TypeError) return t('error.network');
  // web/src/passkeys.ts: the browser's passkey dialog was closed or found nothing.
  if (error instanceof Error && error.name === 'PasskeyCancelled') return t('error.passkeyCancelled');
  return t('error.unknown', { status: '?' });
}
