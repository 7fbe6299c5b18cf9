// Who acted and from where, as the recorder stores it: built from the caller a service is given
// (a person, an API key, or the operator at the command line) and the request that carried it.
import { userInfo } from 'node:os';
import type { Principal } from '../auth/principal.js';
import type { Actor, AuditContext } from './events.js';

/** The caller of a rights-changing operation: a principal, or the operator at the command line. */
type Caller = Principal | { kind: 'operator' };

/** Where a change came from: the request's id, client address and user agent (none on the command line). */
export interface Origin {
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
}

export const COMMAND_LINE: Origin = { requestId: null, ip: null, userAgent: null };

/** The operating-system account running the command line ("unknown" where the system has none). */
export function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

export function actorOf(caller: Caller): Actor {
  switch (caller.kind) {
    case 'user':
      return { type: 'user', userId: caller.userId, sessionId: caller.sessionId };
    case 'api_key':
      return { type: 'api_key', apiKeyId: caller.apiKeyId };
    case 'operator':
      return { type: 'cli', osUser: osUser() };
  }
}

export function auditContext(caller: Caller, origin: Origin): AuditContext {
  return { actor: actorOf(caller), requestId: origin.requestId, ip: origin.ip, userAgent: origin.userAgent };
}
