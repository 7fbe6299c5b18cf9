// Every migration, in order. Names start with a UTC timestamp; add new ones at the end.
import type { Migration } from 'kysely';
import * as m20261121T1200Users from './20261121T1200_users.js';
import * as m20261121T1210Roles from './20261121T1210_roles.js';
import * as m20261121T1400ApiKeys from './20261121T1400_api_keys.js';
import * as m20261121T1300Sessions from './20261121T1300_sessions.js';
import * as m20261121T1310SignInFailures from './20261121T1310_sign_in_failures.js';
import * as m20261121T1320SecurityEvents from './20261121T1320_security_events.js';
import * as m20261121T1500SignInAttempts from './20261121T1500_sign_in_attempts.js';
import * as m20261201T1000ApiKeyCreatorRestrict from './20261201T1000_api_key_creator_restrict.js';
import * as m20261202T1000AuditEvents from './20261202T1000_audit_events.js';
import * as m20261205T1000SignInPairThrottle from './20261205T1000_sign_in_pair_throttle.js';
import * as m20261205T1100ServiceSecrets from './20261205T1100_service_secrets.js';
import * as m20261205T1200PasswordChangeRequired from './20261205T1200_password_change_required.js';
import * as m20261206T1000RefreshFunction from './20261206T1000_refresh_function.js';
import * as m20261207T1000PermissionNames from './20261207T1000_permission_names.js';
import * as m20261208T1000AdminRoleId from './20261208T1000_admin_role_id.js';
import * as m20261210T1000Tasks from './20261210T1000_tasks.js';
import * as m20261211T1000Meetings from './20261211T1000_meetings.js';
import * as m20261212T1000UniqueNameKeys from './20261212T1000_unique_name_keys.js';
import * as m20261213T1000SafeWrites from './20261213T1000_safe_writes.js';
import * as m20261214T1000PartnerKeys from './20261214T1000_partner_keys.js';
import * as m20261215T1000SecondFactors from './20261215T1000_second_factors.js';
import * as m20261221T1000Events from './20261221T1000_events.js';
import * as m20261219T1000Passkeys from './20261219T1000_passkeys.js';
import * as m20261216T1000SealingKeyIds from './20261216T1000_sealing_key_ids.js';
import * as m20261218T1000StepUp from './20261218T1000_step_up.js';
import * as m20261225T1000WebhookSecretKeyIds from './20261225T1000_webhook_secret_key_ids.js';
import * as m20261223T1000IdentityProviders from './20261223T1000_identity_providers.js';
import * as m20261223T1100IdentityLinksBelongToProvider from './20261223T1100_identity_links_belong_to_provider.js';
import * as m20261223T1200SignInChallengePendingOidc from './20261223T1200_sign_in_challenge_pending_oidc.js';
import * as m20261225T1100WebhookEndpointVersions from './20261225T1100_webhook_endpoint_versions.js';
import * as m20261224T1000RoleRequiresSecondFactor from './20261224T1000_role_requires_second_factor.js';
import * as m20261228T1000IdentityProviderVersions from './20261228T1000_identity_provider_versions.js';
import * as m20261227T1000StepUpPasskey from './20261227T1000_step_up_passkey.js';
import * as m20261226T1000ScimExternalIds from './20261226T1000_scim_external_ids.js';
import * as m20261228T1100OidcStepUp from './20261228T1100_oidc_step_up.js';
import * as m20261227T1100SecondFactorCodeFailures from './20261227T1100_second_factor_code_failures.js';
import * as m20261230T1000StepUpChallengeBudget from './20261230T1000_step_up_challenge_budget.js';
import * as m20261231T1000StepUpRefusals from './20261231T1000_step_up_refusals.js';
import * as m20270101T1000EventRelay from './20270101T1000_event_relay.js';
import * as m20270102T1000Invitations from './20270102T1000_invitations.js';
import * as m20270102T1100ApiKeyChanges from './20270102T1100_api_key_changes.js';
import * as m20270103T1400MailSending from './20270103T1400_mail_sending.js';

export const migrations: Record<string, Migration> = {
  '20261121T1200_users': m20261121T1200Users,
  '20261121T1210_roles': m20261121T1210Roles,
  '20261121T1400_api_keys': m20261121T1400ApiKeys,
  '20261121T1300_sessions': m20261121T1300Sessions,
  '20261121T1310_sign_in_failures': m20261121T1310SignInFailures,
  '20261121T1320_security_events': m20261121T1320SecurityEvents,
  '20261121T1500_sign_in_attempts': m20261121T1500SignInAttempts,
  '20261201T1000_api_key_creator_restrict': m20261201T1000ApiKeyCreatorRestrict,
  '20261202T1000_audit_events': m20261202T1000AuditEvents,
  '20261205T1000_sign_in_pair_throttle': m20261205T1000SignInPairThrottle,
  '20261205T1100_service_secrets': m20261205T1100ServiceSecrets,
  '20261205T1200_password_change_required': m20261205T1200PasswordChangeRequired,
  '20261206T1000_refresh_function': m20261206T1000RefreshFunction,
  '20261207T1000_permission_names': m20261207T1000PermissionNames,
  '20261208T1000_admin_role_id': m20261208T1000AdminRoleId,
  '20261210T1000_tasks': m20261210T1000Tasks,
  '20261211T1000_meetings': m20261211T1000Meetings,
  '20261212T1000_unique_name_keys': m20261212T1000UniqueNameKeys,
  '20261213T1000_safe_writes': m20261213T1000SafeWrites,
  '20261214T1000_partner_keys': m20261214T1000PartnerKeys,
  '20261215T1000_second_factors': m20261215T1000SecondFactors,
  '20261221T1000_events': m20261221T1000Events,
  '20261219T1000_passkeys': m20261219T1000Passkeys,
  '20261216T1000_sealing_key_ids': m20261216T1000SealingKeyIds,
  '20261218T1000_step_up': m20261218T1000StepUp,
  '20261225T1000_webhook_secret_key_ids': m20261225T1000WebhookSecretKeyIds,
  '20261223T1000_identity_providers': m20261223T1000IdentityProviders,
  '20261223T1100_identity_links_belong_to_provider': m20261223T1100IdentityLinksBelongToProvider,
  '20261223T1200_sign_in_challenge_pending_oidc': m20261223T1200SignInChallengePendingOidc,
  '20261225T1100_webhook_endpoint_versions': m20261225T1100WebhookEndpointVersions,
  '20261224T1000_role_requires_second_factor': m20261224T1000RoleRequiresSecondFactor,
  '20261228T1000_identity_provider_versions': m20261228T1000IdentityProviderVersions,
  '20261227T1000_step_up_passkey': m20261227T1000StepUpPasskey,
  '20261226T1000_scim_external_ids': m20261226T1000ScimExternalIds,
  '20261228T1100_oidc_step_up': m20261228T1100OidcStepUp,
  '20261227T1100_second_factor_code_failures': m20261227T1100SecondFactorCodeFailures,
  '20261230T1000_step_up_challenge_budget': m20261230T1000StepUpChallengeBudget,
  '20261231T1000_step_up_refusals': m20261231T1000StepUpRefusals,
  '20270101T1000_event_relay': m20270101T1000EventRelay,
  '20270102T1000_invitations': m20270102T1000Invitations,
  '20270102T1100_api_key_changes': m20270102T1100ApiKeyChanges,
  '20270103T1400_mail_sending': m20270103T1400MailSending,
};
