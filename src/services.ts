// The composition root: every service and authenticator is built here, once, from the same
// dependencies, with one factory signature, `(deps) => service`. `main` calls it; handlers and the
// HTTP edge receive what it returns and never build a service themselves.
import type { Dependencies } from './dependencies.js';
import type { Authenticators } from './auth/principal.js';
import { userService } from './users/service.js';
import { roleService } from './roles/service.js';
import { apiKeyService } from './api-keys/service.js';
import { sessionService } from './sessions/service.js';
import { auditService } from './audit/service.js';
import { meetingService } from './meetings/service.js';
import { taskService } from './tasks/service.js';
import { secondFactorService } from './second-factor/service.js';
import { apiKeyAuthenticator } from './api-keys/authenticator.js';
import { bearerAuthenticator } from './sessions/authenticator.js';
import { revokeSessions } from './sessions/revocation.js';
import { idempotencyService } from './idempotency/service.js';
import { UsageCounter } from './api-keys/usage.js';
import { admissionService, type Admission } from './admission/admission.js';
import { leakReportService, loadReporterKeys } from './api-keys/leak-reports.js';

export interface Services {
  users: ReturnType<typeof userService>;
  roles: ReturnType<typeof roleService>;
  apiKeys: ReturnType<typeof apiKeyService>;
  leakReports: ReturnType<typeof leakReportService>;
  sessions: ReturnType<typeof sessionService>;
  audit: ReturnType<typeof auditService>;
  meetings: ReturnType<typeof meetingService>;
  tasks: ReturnType<typeof taskService>;
  /** Creates made once per Idempotency-Key. */
  idempotency: ReturnType<typeof idempotencyService>;
  secondFactors: ReturnType<typeof secondFactorService>;
  /** The two ways in: an API key (x-api-key) or a session's access token (Authorization: Bearer). */
  authenticators: Authenticators;
  /** Rate limits and key usage, counted in this process and reconciled through the database. */
  admission: Admission;
}

export function buildServices(deps: Dependencies): Services {
  const usage = new UsageCounter();
  return {
    users: userService(deps, revokeSessions),
    roles: roleService(deps),
    apiKeys: apiKeyService(deps, deps.config.rateLimits.apiKeyDefault),
    leakReports: leakReportService(deps, deps.config.leakReportKeysFile ? loadReporterKeys(deps.config.leakReportKeysFile) : null),
    sessions: sessionService(deps),
    audit: auditService(deps),
    meetings: meetingService(deps),
    tasks: taskService(deps),
    idempotency: idempotencyService(deps),
    secondFactors: secondFactorService(deps),
    authenticators: { apiKey: apiKeyAuthenticator(deps, usage), bearer: bearerAuthenticator(deps) },
    admission: admissionService(deps, usage),
  };
}
