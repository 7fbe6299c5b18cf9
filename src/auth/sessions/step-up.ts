// Step-up (docs/AUTH.md, "Step-up"): the sensitive changes (an operation marked `x-step-up` in the
// contract) need a fresh proof that the person is at the keyboard, not only a session's access
// token, which a thief may hold. The proof is made on the session by POST /sessions/current/step-up
// (a second factor; the password for a person without one) and is good for STEP_UP_TTL_S.
//
// Decisions:
// - Signing in makes no proof: a token stolen right after a sign-in is not enough either.
// - A person with a second factor proves it with one; their password is refused, since whoever
//   stole the session may know it too. A password proof made before enrolling does not count
//   once a factor is enrolled (checked here, at use, not by clearing old proofs).
// - A person without any second factor proves it with the password, as GitHub's sudo mode does;
//   not one whose domain's provider requires company sign-in (sso_required): that password proves
//   nothing (step-up-proofs.ts refuses it, PUT /me/password needs a fresh proof, proofsOf omits it).
// - API keys have no session and no second factor: no operation marked `x-step-up` accepts one
//   (the router refuses to start otherwise, src/http/authenticate.ts).
// - A passkey proves it too (`proveWithPasskey` in step-up-proofs.ts): its answer to a
//   challenge bound to this session and person, good once, checked as at sign-in, then
//   `markSteppedUp(..., 'passkey')`; `proofsOf` (SecondFactorChecks' `stepUpMethodsOf`)
//   lists it for a person holding one.
import type { Kysely, Transaction } from 'kysely';
import type { Database, StepUpMethod } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import type { Principal, StepUpRequirement } from '../principal.js';
import { forbidden, refused } from '../../errors.js';
import { hasSecondFactor } from '../second-factor.js';
import { sessionIsLive, type Liveness } from './liveness.js';
import { ssoRequiredProvider } from './sso-required.js';

/** How long a proof lasts: long enough for one change and its follow-up (remove, then enrol anew), short enough to be "just now". */
export const STEP_UP_TTL_S = 300;

type Db = Kysely<Database> | Transaction<Database>;

/** The session's latest proof, whether its person has a second factor now, and their address. */
async function stepUpState(db: Db, sessionId: string) {
  return db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.stepped_up_at', 's.step_up_method', 'u.email', hasSecondFactor('s.user_id').as('has_second_factor')])
    .where('s.id', '=', sessionId)
    .executeTakeFirst();
}

/** Whether a proof made at `at` by `method` still opens a sensitive change `now`, for a person who has (or has not) a second factor. */
export function proofIsFresh(proof: { at: Date | null; method: StepUpMethod | null }, hasFactor: boolean, now: Date): boolean {
  if (!proof.at || !proof.method) return false;
  if (proof.at.getTime() <= now.getTime() - STEP_UP_TTL_S * 1000) return false;
  // A person with a second factor proves it with one: the password, or a login at the provider
  // (docs/IDENTITY.md, "Step-up at the provider"), is no proof for them.
  return !(hasFactor && (proof.method === 'password' || proof.method === 'oidc'));
}

/**
 * Locks the session a proof is made on, in the proof's transaction, and answers whether it is still
 * live: a session revoked (or signed out) after the request was authenticated gets no proof and no
 * `session_stepped_up`, and a revocation that comes later waits for the proof's transaction. Called
 * after the factor's own rows are locked (the order of a reset, src/auth/second-factors/reset.ts: factors,
 * then sessions), so the two cannot deadlock.
 */
export async function lockLiveSession(trx: Transaction<Database>, sessionId: string, at: Liveness): Promise<boolean> {
  const row = await trx.selectFrom('sessions as s').select('s.id').where('s.id', '=', sessionId).where(sessionIsLive('s', at)).forUpdate().executeTakeFirst();
  return row !== undefined;
}

/** A session that ended while its request was under way: answered as the bearer check answers it (src/auth/sessions/authenticator.ts). */
export const sessionGone = () => refused('invalid_token', 'The access token is unknown, expired or revoked.');

/** Records a fresh proof on a live session. */
export async function markSteppedUp(trx: Db, sessionId: string, method: StepUpMethod, now: Date): Promise<void> {
  await trx
    .updateTable('sessions')
    .set({ stepped_up_at: now, step_up_method: method })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .where('ended_at', 'is', null)
    .execute();
}

export const stepUpRequired = (methods: string[]) =>
  forbidden('step_up_required', 'This change needs a fresh proof that it is you: present one at POST /sessions/current/step-up, then try again.', {
    step_up_methods: methods,
  });

/**
 * The check of an `x-step-up` operation, run by the router after the permission check (one query,
 * on these rare operations only; the bearer statement of every request is left as it is).
 * `proofsOf` lists what the person can present, for the refusal.
 */
export function stepUpGate({ db, clock }: Pick<Dependencies, 'db' | 'clock'>, proofsOf: (userId: string) => Promise<string[]>) {
  return async (principal: Extract<Principal, { kind: 'user' }>, requirement: StepUpRequirement): Promise<void> => {
    const state = await stepUpState(db, principal.sessionId);
    const hasFactor = state?.has_second_factor ?? false;
    // The operation checks the password of a person without a second factor itself (PUT /me/password),
    // unless their domain's provider requires company sign-in: that password proves nothing. Except
    // a password someone else set, which must be replaced before anything else, a step-up included.
    if (requirement === 'with_second_factor' && state && !hasFactor && (principal.passwordChangeRequired || !(await ssoRequiredProvider(db, state.email)))) return;
    if (state && proofIsFresh({ at: state.stepped_up_at, method: state.step_up_method }, hasFactor, clock.now())) return;
    // Possibly none (a retired password, no link to the provider): nothing is offered that would be refused.
    throw stepUpRequired(await proofsOf(principal.userId));
  };
}
