// The platform's services: authentication, limits, audit, idempotency, mail, and the resources the
// authentication wing reads, built once from the same dependencies (and, where one service uses
// another, the one built here). src/composition.ts adds each feature's own (src/features.ts). `main` calls it; handlers and the
// HTTP edge receive what it returns and never build a service themselves.
import type { Dependencies } from './dependencies.js';
import type { Authenticators } from './auth/principal.js';
import { UserService } from './users/service.js';
import { RoleService } from './roles/service.js';
import { ApiKeyService } from './api-keys/service.js';
import { SignInAttempts } from './auth/sessions/sign-in-attempts.js';
import { SignInService } from './auth/sessions/sign-in.js';
import { StepUpService } from './auth/sessions/step-up-proofs.js';
import { TokenRefresh } from './auth/sessions/token-refresh.js';
import { SessionManagement } from './auth/sessions/management.js';
import { PasswordChange } from './auth/sessions/password-change.js';
import { AuditService } from './audit/service.js';
import { SecondFactorService } from './auth/second-factors/service.js';
import { SecondFactorChecks } from './auth/second-factors/checks.js';
import { PasskeyService } from './auth/second-factors/passkeys.js';
import { PasskeyAssertions } from './auth/second-factors/passkey-assertions.js';
import { SecondFactorResetService } from './auth/second-factors/reset.js';
import { apiKeyAuthenticator } from './api-keys/authenticator.js';
import { KeyCache } from './api-keys/key-cache.js';
import { UseSpender } from './api-keys/uses.js';
import { bearerAuthenticator } from './auth/sessions/authenticator.js';
import { stepUpGate } from './auth/sessions/step-up.js';
import { revokeSessions } from './auth/sessions/revocation.js';
import { IdempotencyService } from './idempotency/service.js';
import { UsageCounter } from './api-keys/usage.js';
import { AdmissionService } from './limits/admission/admission.js';
import { LeakReportService, loadReporterKeys } from './api-keys/leak-reports.js';
import { WebhookEndpointService } from './webhooks/endpoints.js';
import { WebhookDeliveryService } from './webhooks/deliveries.js';
import { EventFeed } from './webhooks/feed.js';
import { DeliveryWorker } from './webhooks/worker.js';
import { KeyInflector, type Inflection } from './contract/inflection.js';
import { readContract } from './contract/spec.js';
import { IdentityProviderService } from './auth/identity-providers/providers.js';
import { ScimUserService } from './scim/users.js';
import { ScimGroupService } from './scim/groups.js';
import { OidcSignInService } from './auth/identity-providers/sign-in.js';
import { OidcStepUpService, withOidcStepUp } from './auth/identity-providers/provider-step-up.js';
import type { Config } from './config.js';
import { mailService } from './mail/service.js';

/** The services every feature may use: authentication, limits, audit, idempotency, mail, and the resources the authentication wing reads. */
export interface PlatformServices {
  users: UserService;
  roles: RoleService;
  apiKeys: ApiKeyService;
  leakReports: LeakReportService;
  /** Signing in: a password, its second step, a passkey alone, after an identity provider. */
  signIn: SignInService;
  /** A fresh proof for the current session. */
  stepUp: StepUpService;
  tokenRefresh: TokenRefresh;
  /** Listing and ending sessions. */
  sessions: SessionManagement;
  passwordChange: PasswordChange;
  audit: AuditService;
  /** Creates made once per Idempotency-Key. */
  idempotency: IdempotencyService;
  /** A person's authenticator app and recovery codes (checking them at sign-in and step-up is the sessions' SecondFactorChecks, built below). */
  secondFactors: SecondFactorService;
  /** An administrator's reset of someone's second factors (also the command line's). */
  secondFactorResets: SecondFactorResetService;
  /** Webhook endpoints: where events go and the secret that signs them. */
  webhookEndpoints: WebhookEndpointService;
  /** What was sent to an endpoint: a test, the list, a replay. */
  webhookDeliveries: WebhookDeliveryService;
  /** GET /events. */
  eventFeed: EventFeed;
  /** Sends due deliveries; started by src/main.ts (and by the tests that need it). */
  deliveries: DeliveryWorker;
  /** A person's passkeys (checking one at sign-in and step-up is the sessions' PasskeyAssertions, built below). */
  passkeys: PasskeyService;
  /**
   * API keys verified from memory, in step through LISTEN/NOTIFY; until started (src/main.ts, on
   * PostgreSQL only) and whenever it is not listening, every key is verified by the database.
   */
  keyCache: KeyCache;
  /** Usage-limited keys' uses, spent in the database; leases held while the key cache is in step are given back by `stop` (src/main.ts). */
  keyUses: UseSpender;
  /** The two ways in: an API key (x-api-key) or a session's access token (Authorization: Bearer). */
  authenticators: Authenticators;
  /** Rate limits and key usage, counted in this process and reconciled through the database. */
  admission: AdmissionService;
  /** Companies' OpenID Providers, and signing in with one (src/auth/identity-providers). */
  identityProviders: IdentityProviderService;
  oidcSignIn: OidcSignInService;
  /** A fresh proof at the provider a person is linked to. */
  oidcStepUp: OidcStepUpService;
  /** SCIM 2.0 provisioning of people by a company's directory (src/scim). */
  scimUsers: ScimUserService;
  /** SCIM Groups: the roles, their membership changed by a directory (src/scim/groups.ts). */
  scimGroups: ScimGroupService;
  /** The outbox of mail's sender and the development mailbox (src/mail); started by src/main.ts. */
  mail: ReturnType<typeof mailService>;
  /** What handlers show of the configuration (the redirect URI of identity providers). */
  config: Pick<Config, 'oidc'>;
}

export function buildPlatform(deps: Dependencies): PlatformServices {
  const usage = new UsageCounter();
  const secondFactors = new SecondFactorService(deps);
  const passkeys = new PasskeyService(deps, (trx, userId, now) => secondFactors.newCodesFor(trx, userId, now));
  const factors = { secondFactors: new SecondFactorChecks(deps), passkeys: new PasskeyAssertions(deps) };
  const attempts = new SignInAttempts(deps);
  const signIn = new SignInService(deps, factors, attempts);
  const users = new UserService(deps, revokeSessions);
  const keys = new KeyCache(deps, deps.config.apiKeyCache);
  const spender = new UseSpender(deps, () => keys.epoch());
  return {
    users,
    roles: new RoleService(deps),
    apiKeys: new ApiKeyService(deps, deps.config.rateLimits.apiKeyDefault),
    leakReports: new LeakReportService(deps, deps.config.leakReportKeysFile ? loadReporterKeys(deps.config.leakReportKeysFile) : null),
    signIn,
    stepUp: new StepUpService(deps, factors, attempts),
    tokenRefresh: new TokenRefresh(deps),
    sessions: new SessionManagement(deps),
    passwordChange: new PasswordChange(deps, attempts),
    audit: new AuditService(deps),
    idempotency: new IdempotencyService(deps),
    secondFactors,
    secondFactorResets: new SecondFactorResetService(deps, revokeSessions),
    webhookEndpoints: new WebhookEndpointService(deps, deps.config.webhooks),
    webhookDeliveries: new WebhookDeliveryService(deps),
    eventFeed: new EventFeed(deps),
    deliveries: new DeliveryWorker(deps, deps.config.webhooks, eventStyler()),
    passkeys,
    keyCache: keys,
    keyUses: spender,
    authenticators: { apiKey: apiKeyAuthenticator(deps, usage, keys.find), bearer: bearerAuthenticator(deps), spendKeyUse: (apiKeyId) => spender.spend(apiKeyId), stepUp: stepUpGate(deps, withOidcStepUp(deps.db, (userId) => factors.secondFactors.stepUpMethodsOf(userId))) },
    admission: new AdmissionService(deps, usage),
    identityProviders: new IdentityProviderService(deps),
    oidcSignIn: new OidcSignInService(deps, signIn),
    oidcStepUp: new OidcStepUpService(deps),
    scimUsers: new ScimUserService(deps, users),
    scimGroups: new ScimGroupService(deps, users),
    mail: mailService(deps),
    config: { oidc: deps.config.oidc },
  };
}

/** Payloads are stored in snake_case; each endpoint gets its key style, by the contract's Event schema (as GET /events answers). */
function eventStyler() {
  const inflector = new KeyInflector(readContract());
  return (payload: Record<string, unknown>, style: string) =>
    inflector.toStyle(payload, { $ref: payload.type === 'webhook_endpoint.test' ? '#/components/schemas/WebhookTestEvent' : '#/components/schemas/Event' }, style as Inflection);
}
