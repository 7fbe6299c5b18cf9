// The name of each audit event type in the audit page's filter, in both languages. Typed against
// the contract's AuditEventType: a type added to the contract fails the type check until named here
// or by its feature's page (web/src/pages/<page>.entry.ts).
import type { components } from '../../../generated/openapi.js';
import { pageMessages, type Wording } from '../page-messages.js';
import { declaredByPages, mapValues, type DeclaredByPages } from './declared-by-pages.js';

type AuditEventType = components['schemas']['AuditEventType'];

/** The platform's audit event types; a feature's page names its own (its entry's `auditTypes`). */
const platform = {
  sign_in_succeeded: { en: 'Sign-in', fr: 'Connexion' },
  sign_in_failed: { en: 'Failed sign-in', fr: 'Connexion échouée' },
  sign_in_throttled: { en: 'Sign-in refused: too many attempts', fr: 'Connexion refusée : trop de tentatives' },
  tokens_refreshed: { en: 'Session extended', fr: 'Session prolongée' },
  refresh_token_reused: { en: 'Refresh token used twice', fr: 'Jeton de renouvellement utilisé deux fois' },
  session_revoked: { en: 'Session ended', fr: 'Session fermée' },
  password_changed: { en: 'Password changed', fr: 'Mot de passe modifié' },
  api_key_created: { en: 'API key created', fr: 'Clé d’API créée' },
  api_key_updated: { en: 'API key changed', fr: 'Clé d’API modifiée' },
  api_key_rotated: { en: 'API key rotated', fr: 'Clé d’API renouvelée' },
  api_key_revoked: { en: 'API key revoked', fr: 'Clé d’API révoquée' },
  api_key_ip_refused: { en: 'API key refused from an address', fr: 'Clé d’API refusée depuis une adresse' },
  api_key_leak_reported: { en: 'API key reported leaked', fr: 'Fuite de clé d’API signalée' },
  role_created: { en: 'Role created', fr: 'Rôle créé' },
  role_updated: { en: 'Role changed', fr: 'Rôle modifié' },
  role_deleted: { en: 'Role deleted', fr: 'Rôle supprimé' },
  user_created: { en: 'User created', fr: 'Utilisateur créé' },
  user_updated: { en: 'User changed', fr: 'Utilisateur modifié' },
  user_disabled: { en: 'User disabled', fr: 'Utilisateur désactivé' },
  user_exported: { en: 'Personal data exported', fr: 'Données personnelles exportées' },
  user_erased: { en: 'Person erased', fr: 'Personne effacée' },
  second_factor_enrolled: { en: 'Second factor added', fr: 'Second facteur ajouté' },
  second_factor_removed: { en: 'Second factor removed', fr: 'Second facteur supprimé' },
  second_factor_failed: { en: 'Wrong second-factor code', fr: 'Code de second facteur erroné' },
  second_factor_locked: { en: 'Second-factor codes locked', fr: 'Codes de second facteur bloqués' },
  recovery_code_used: { en: 'Recovery code used', fr: 'Code de secours utilisé' },
  recovery_codes_regenerated: { en: 'New recovery codes', fr: 'Nouveaux codes de secours' },
  second_factors_reset: { en: 'Second factors reset', fr: 'Seconds facteurs réinitialisés' },
  webhook_endpoint_created: { en: 'Webhook endpoint created', fr: 'Point de terminaison webhook créé' },
  webhook_endpoint_updated: { en: 'Webhook endpoint changed', fr: 'Point de terminaison webhook modifié' },
  webhook_endpoint_secret_rotated: { en: 'Webhook secret rotated', fr: 'Secret de webhook renouvelé' },
  webhook_endpoint_deleted: { en: 'Webhook endpoint deleted', fr: 'Point de terminaison webhook supprimé' },
  webhook_endpoint_disabled: { en: 'Webhook endpoint disabled', fr: 'Point de terminaison webhook désactivé' },
  passkey_renamed: { en: 'Passkey renamed', fr: 'Clé d’accès renommée' },
  session_stepped_up: { en: 'Identity confirmed for a sensitive change', fr: 'Identité confirmée pour un changement sensible' },
  identity_provider_created: { en: 'Identity provider added', fr: 'Fournisseur d’identité ajouté' },
  identity_provider_updated: { en: 'Identity provider changed', fr: 'Fournisseur d’identité modifié' },
  identity_provider_deleted: { en: 'Identity provider removed', fr: 'Fournisseur d’identité supprimé' },
  identity_linked: { en: 'Account linked to an identity provider', fr: 'Compte lié à un fournisseur d’identité' },
  password_reset_requested: { en: 'Password recovery asked for', fr: 'Récupération du mot de passe demandée' },
  password_reset_completed: { en: 'Password recovered', fr: 'Mot de passe récupéré' },
} satisfies Partial<Record<AuditEventType, Wording>>;

// Every audit event type of the contract named once: a type no one names does not compile.
const named: Record<AuditEventType, Wording> = { ...platform, ...mapValues(declaredByPages<{ name: Wording }>('auditTypes'), (w) => w.name) } as typeof platform & DeclaredByPages<'auditTypes'>;


export const auditTypeMessages = pageMessages(
  Object.fromEntries(Object.entries(named).map(([type, wording]) => [`auditType.${type}`, wording])) as Record<`auditType.${AuditEventType}`, Wording>,
);
