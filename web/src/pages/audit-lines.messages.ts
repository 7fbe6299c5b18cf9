// The line of each audit event type in the journal ({actor}, {target}, {reason}), in both languages.
// Typed against the contract's AuditEventType: a type added to the contract fails the type check
// until its line is written here or by its feature's page (web/src/pages/<page>.entry.ts).
import type { components } from '../../../generated/openapi.js';
import { pageMessages, type Wording } from '../page-messages.js';
import { declaredByPages, mapValues, type DeclaredByPages } from './declared-by-pages.js';

type AuditEventType = components['schemas']['AuditEventType'];

/** The platform's audit event types; a feature's page writes its own (its entry's `auditTypes`). */
const platform = {
  sign_in_succeeded: { en: '{actor} signed in', fr: '{actor} s’est connecté·e' },
  sign_in_failed: { en: 'Failed sign-in as {target} ({reason})', fr: 'Connexion échouée en tant que {target} ({reason})' },
  sign_in_throttled: { en: 'Sign-in refused: too many attempts', fr: 'Connexion refusée : trop de tentatives' },
  tokens_refreshed: { en: '{actor} refreshed their login tokens', fr: '{actor} a renouvelé ses jetons de connexion' },
  refresh_token_reused: { en: 'A used refresh token of {target} was presented again: the session was revoked', fr: 'Un jeton de renouvellement déjà utilisé de {target} a été présenté à nouveau : la session a été révoquée' },
  session_revoked: { en: '{actor} ended a session of {target} ({reason})', fr: '{actor} a fermé une session de {target} ({reason})' },
  password_changed: { en: '{actor} changed the password of {target}', fr: '{actor} a changé le mot de passe de {target}' },
  api_key_created: { en: '{actor} created key {target}', fr: '{actor} a créé la clé {target}' },
  api_key_updated: { en: '{actor} changed key {target}', fr: '{actor} a modifié la clé {target}' },
  api_key_rotated: { en: '{actor} rotated key {target}', fr: '{actor} a renouvelé la clé {target}' },
  api_key_revoked: { en: '{actor} revoked key {target}', fr: '{actor} a révoqué la clé {target}' },
  api_key_ip_refused: { en: 'Key {target} was refused from an address outside its allowlist', fr: 'La clé {target} a été refusée depuis une adresse hors de sa liste' },
  api_key_leak_reported: { en: 'Key {target} was reported leaked and revoked', fr: 'La clé {target} a été signalée divulguée et révoquée' },
  role_created: { en: '{actor} created role {target}', fr: '{actor} a créé le rôle {target}' },
  role_updated: { en: '{actor} changed role {target}', fr: '{actor} a modifié le rôle {target}' },
  role_deleted: { en: '{actor} deleted role {target}', fr: '{actor} a supprimé le rôle {target}' },
  user_created: { en: '{actor} created user {target}', fr: '{actor} a créé l’utilisateur {target}' },
  user_updated: { en: '{actor} changed user {target}', fr: '{actor} a modifié l’utilisateur {target}' },
  user_exported: { en: '{actor} downloaded the data of {target}', fr: '{actor} a téléchargé les données de {target}' },
  user_disabled: { en: '{actor} disabled user {target}', fr: '{actor} a désactivé l’utilisateur {target}' },
  user_erased: { en: '{actor} erased a person', fr: '{actor} a effacé une personne' },
  second_factor_enrolled: { en: '{actor} set up a second factor for {target}', fr: '{actor} a configuré un second facteur pour {target}' },
  second_factor_removed: { en: '{actor} removed a second factor of {target}', fr: '{actor} a retiré un second facteur de {target}' },
  second_factor_failed: { en: 'Wrong second-factor code for {target}', fr: 'Code de second facteur erroné pour {target}' },
  second_factor_locked: { en: 'Too many wrong codes for {target}: the authenticator app is refused for a day', fr: 'Trop de codes erronés pour {target} : l’application d’authentification est refusée pour une journée' },
  recovery_code_used: { en: '{actor} signed in with a recovery code', fr: '{actor} s’est connecté·e avec un code de secours' },
  recovery_codes_regenerated: { en: '{actor} made new recovery codes', fr: '{actor} a créé de nouveaux codes de secours' },
  session_stepped_up: { en: '{actor} confirmed it was them for a sensitive change', fr: '{actor} a confirmé son identité pour une modification sensible' },
  second_factors_reset: { en: '{actor} reset the second factors of {target}', fr: '{actor} a réinitialisé les seconds facteurs de {target}' },
  webhook_endpoint_created: { en: '{actor} created the webhook endpoint {target}', fr: '{actor} a créé le point de terminaison webhook {target}' },
  webhook_endpoint_updated: { en: '{actor} changed the webhook endpoint {target}', fr: '{actor} a modifié le point de terminaison webhook {target}' },
  webhook_endpoint_secret_rotated: { en: '{actor} rotated the signing secret of the webhook endpoint {target}', fr: '{actor} a renouvelé le secret de signature du point de terminaison webhook {target}' },
  webhook_endpoint_deleted: { en: '{actor} deleted the webhook endpoint {target}', fr: '{actor} a supprimé le point de terminaison webhook {target}' },
  webhook_endpoint_disabled: { en: '{actor} disabled the webhook endpoint {target}: every delivery failed for days', fr: '{actor} a désactivé le point de terminaison webhook {target} : toutes les livraisons échouaient depuis des jours' },
  passkey_renamed: { en: '{actor} renamed a passkey of {target}', fr: '{actor} a renommé une clé d’accès de {target}' },
  identity_provider_created: { en: '{actor} added the identity provider {target}', fr: '{actor} a ajouté le fournisseur d’identité {target}' },
  identity_provider_updated: { en: '{actor} changed the identity provider {target}', fr: '{actor} a modifié le fournisseur d’identité {target}' },
  identity_provider_deleted: { en: '{actor} removed the identity provider {target}', fr: '{actor} a retiré le fournisseur d’identité {target}' },
  identity_linked: { en: '{target} was linked to their company account', fr: '{target} a été lié à son compte d’entreprise' },
  password_reset_requested: { en: '{actor} asked for a password recovery link for {target}', fr: '{actor} a demandé un lien de récupération du mot de passe pour {target}' },
  password_reset_completed: { en: '{target} chose a new password through a recovery link', fr: '{target} a choisi un nouveau mot de passe par un lien de récupération' },
} satisfies Partial<Record<AuditEventType, Wording>>;

// Every audit event type of the contract has its line: a type without one does not compile.
const written: Record<AuditEventType, Wording> = { ...platform, ...mapValues(declaredByPages<{ line: Wording }>('auditTypes'), (w) => w.line) } as typeof platform & DeclaredByPages<'auditTypes'>;

export const auditLineMessages = pageMessages(
  Object.fromEntries(Object.entries(written).map(([type, wording]) => [`auditLine.${type}`, wording])) as Record<`auditLine.${AuditEventType}`, Wording>,
);
