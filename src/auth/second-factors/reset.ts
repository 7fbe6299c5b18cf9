// Resetting a person's second factors for them (a lost phone): every authenticator app and passkey
// and every recovery code go, and so do the person's sessions, since whoever holds one may be the
// one who took the phone. Bounded by the authority rule (docs/AUTH.md): resetting someone who
// holds a permission the caller lacks is refused. The operator's command line may do it for the
// last administrator. Sessions end through the one revocation path, handed in by the caller (as
// the users service's EndSessions).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceDeps } from '../../dependencies.js';
import type { Actor } from '../../audit/events.js';
import type { Origin } from '../../audit/context.js';
import { actorOf } from '../../audit/context.js';
import { assertMayActOn, isSelf, type Authority } from '../authority.js';
import { lockUserForShare } from '../../users/repository.js';
import { lockRolesOfUser } from '../../roles/repository.js';
import { permissionsOfRoles } from '../../roles/permissions.js';
import { recordAuditEvent } from '../../audit/recorder.js';
import { notFound } from '../../errors.js';
import { resourceIdOr } from '../../uuid.js';

export type EndSessions = (trx: Kysely<Database>, where: { userId: string }, reason: 'second_factors_reset', at: Date, origin: Origin, actor: Actor) => Promise<unknown>;

/** What a reset did: `no_user` for an id nobody has, `nothing` when there was no factor to reset. */
export type ResetOutcome = 'reset' | 'nothing' | 'no_user';

export async function resetSecondFactors({ db, clock }: ServiceDeps, endSessions: EndSessions, authority: Authority, userId: string, origin: Origin): Promise<ResetOutcome> {
  const now = clock.now();
  return db.transaction().execute(async (trx) => {
    // Judged on the person and roles locked, as every change of someone else's rights is.
    if (!(await lockUserForShare(trx, userId))) return 'no_user';
    if (!isSelf(authority, userId)) assertMayActOn(authority, permissionsOfRoles(await lockRolesOfUser(trx, userId)), 'This user');
    const factors = await trx.deleteFrom('second_factors').where('user_id', '=', userId).returning('kind').execute();
    const codes = await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).returning('user_id').execute();
    // The daily cap on wrong codes starts again with the new factor (docs/AUTH.md).
    await trx.deleteFrom('second_factor_code_failures').where('user_id', '=', userId).execute();
    if (factors.length === 0 && codes.length === 0) return 'nothing';
    const actor = actorOf(authority);
    await endSessions(trx, { userId }, 'second_factors_reset', now, origin, actor);
    await recordAuditEvent(trx, {
      type: 'second_factors_reset',
      at: now,
      context: { actor, ...origin },
      target: { type: 'user', id: userId },
      userId,
      details: { factors: factors.length },
    });
    return 'reset';
  });
}

const userNotFound = () => notFound('not_found', 'No user has this id.');

/**
 * The reset as the API offers it (`DELETE /users/{id}/second-factors`): the same function as the
 * command line's, bounded by the caller's authority; an id nobody has is the users' 404.
 */
export class SecondFactorResetService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly endSessions: EndSessions,
  ) {}

  async reset(authority: Authority, id: string, origin: Origin): Promise<ResetOutcome> {
    const outcome = await resetSecondFactors(this.deps, this.endSessions, authority, resourceIdOr(id, userNotFound), origin);
    if (outcome === 'no_user') throw userNotFound();
    return outcome;
  }
}
