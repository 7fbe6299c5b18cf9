// What the back office says for each problem `code` of the API: the code is the API's
// stable word for what went wrong; the `detail` stays the API's own English sentence. The page says
// it in the person's language from this table (web/src/api/problem.ts describeError), and falls
// back to the API's `detail` for a code not listed here. A feature's page brings its own codes (its
// entry's `problems`). French uses typographic apostrophes.
import { pageMessages, type Wording } from './page-messages.js';
import * as pages from './pages/registry.js';

/** A feature's own problem codes, from its page's entry (`problems`). */
const fromPages: Record<string, Wording> = Object.assign({}, ...Object.values(pages).map((entry) => ('problems' in entry ? entry.problems : {})));

export const problemMessages = pageMessages({
  ...(Object.fromEntries(Object.entries(fromPages).map(([code, wording]) => [`problem.${code}`, wording])) as Record<`problem.${string}`, Wording>),
  'problem.email_taken': { en: 'Another user already has this e-mail address.', fr: 'Un autre utilisateur a déjà cette adresse e-mail.' },
  'problem.invalid_credentials': { en: 'The e-mail address or the password is wrong.', fr: 'L’adresse e-mail ou le mot de passe est erroné.' },
  'problem.password_rejected': { en: 'This password is too common; choose another.', fr: 'Ce mot de passe est trop courant ; choisissez-en un autre.' },
  'problem.self_erasure': { en: 'You cannot erase yourself; another administrator can.', fr: 'Vous ne pouvez pas vous effacer vous-même : un autre administrateur le peut.' },
  'problem.user_erased': { en: 'This person was erased: an erased person cannot be changed, made active or given a role.', fr: 'Cette personne a été effacée : une personne effacée ne peut être ni modifiée, ni réactivée, ni recevoir un rôle.' },
  'problem.last_admin': { en: 'This is the last active administrator; make another user an administrator first.', fr: 'C’est le dernier administrateur actif : faites d’abord d’un autre utilisateur un administrateur.' },
  'problem.precondition_failed': { en: 'Someone else changed this record since you read it. Nothing was changed; read it again, then make your change.', fr: 'Quelqu’un d’autre a modifié cet enregistrement depuis que vous l’avez lu. Rien n’a été modifié : relisez-le, puis refaites votre modification.' },
  'problem.not_found': { en: 'This record does not exist, or no longer does.', fr: 'Cet enregistrement n’existe pas, ou plus.' },
  'problem.session_not_found': { en: 'This session does not exist, or has ended.', fr: 'Cette session n’existe pas, ou a pris fin.' },
  'problem.invalid_token': { en: 'Your session has ended. Please sign in again.', fr: 'Votre session a pris fin. Veuillez vous reconnecter.' },
  'problem.unauthenticated': { en: 'You are not signed in. Please sign in again.', fr: 'Vous n’êtes pas connecté. Veuillez vous reconnecter.' },
  'problem.refresh_token_reused': { en: 'Your session was ended for safety: it was used from two places. Please sign in again.', fr: 'Votre session a été fermée par sécurité : elle a servi depuis deux endroits. Veuillez vous reconnecter.' },
  'problem.sso_required': { en: 'People of your domain sign in with their company’s identity provider, not with a password.', fr: 'Les personnes de votre domaine se connectent avec le fournisseur d’identité de leur entreprise, pas avec un mot de passe.' },
  'problem.identity_provider_not_found': { en: 'No identity provider answers for this e-mail address.', fr: 'Aucun fournisseur d’identité ne répond pour cette adresse e-mail.' },
  'problem.oidc_state_invalid': { en: 'This sign-in is unknown, expired or already used; start again.', fr: 'Cette connexion est inconnue, expirée ou déjà utilisée ; recommencez.' },
  'problem.oidc_step_up_other_subject': { en: 'Someone else signed in at the identity provider; sign in there as yourself.', fr: 'Quelqu’un d’autre s’est connecté chez le fournisseur d’identité ; connectez-vous-y sous votre nom.' },
  'problem.oidc_step_up_stale': { en: 'The identity provider did not make you sign in again just now; start again.', fr: 'Le fournisseur d’identité ne vous a pas fait vous reconnecter à l’instant ; recommencez.' },
  'problem.password_change_required': { en: 'Your password was set by someone else: choose your own first.', fr: 'Votre mot de passe a été défini par quelqu’un d’autre : choisissez d’abord le vôtre.' },
  'problem.second_factor_required': { en: 'A role of yours requires a second factor: set one up first.', fr: 'Un de vos rôles exige un second facteur : configurez-en un d’abord.' },
  'problem.step_up_needs_second_factor': { en: 'You have a second factor: prove it is you with a code from it.', fr: 'Vous avez un second facteur : prouvez que c’est vous avec un de ses codes.' },
  'problem.no_passkey': { en: 'You have no passkey; prove it is you with another of your factors.', fr: 'Vous n’avez pas de clé d’accès ; prouvez que c’est vous avec un autre de vos facteurs.' },
  'problem.no_second_factor': { en: 'Set up a second factor first; recovery codes come with it.', fr: 'Configurez d’abord un second facteur ; les codes de secours l’accompagnent.' },
  'problem.passkey_already_registered': { en: 'This passkey is registered already.', fr: 'Cette clé d’accès est déjà enregistrée.' },
  'problem.too_many_passkeys': { en: 'You hold 20 passkeys already; remove one first.', fr: 'Vous avez déjà 20 clés d’accès ; supprimez-en une d’abord.' },
  'problem.totp_already_enrolled': { en: 'An authenticator app is already set up; remove it first.', fr: 'Une application d’authentification est déjà configurée ; supprimez-la d’abord.' },
  'problem.api_key_creator_disabled': { en: 'The user who created this API key is disabled, so the key no longer works.', fr: 'L’utilisateur qui a créé cette clé d’API est désactivé : la clé ne fonctionne plus.' },
  'problem.webhook_url_refused': {
    en: 'This URL is refused: it must use https and reach a public address. For a receiver on this machine or your network (development), the service must run with WEBHOOKS_ALLOW_PRIVATE_URLS=true.',
    fr: 'Cette URL est refusée : elle doit utiliser https et joindre une adresse publique. Pour un récepteur sur cette machine ou votre réseau (développement), le service doit tourner avec WEBHOOKS_ALLOW_PRIVATE_URLS=true.',
  },
  'problem.issuer_refused': {
    en: 'This issuer is refused: it must use https and reach a public address (OIDC_ALLOW_INSECURE_ISSUERS=true allows others, in development only).',
    fr: 'Cet émetteur est refusé : il doit utiliser https et joindre une adresse publique (OIDC_ALLOW_INSECURE_ISSUERS=true en autorise d’autres, en développement seulement).',
  },
  'problem.validation_failed': { en: 'A value sent is not valid.', fr: 'Une valeur envoyée n’est pas valide.' },
  'problem.payload_too_large': { en: 'What you sent is too large.', fr: 'Ce que vous avez envoyé est trop volumineux.' },
  'problem.idempotency_key_in_progress': { en: 'The same request is still being processed; try again shortly.', fr: 'La même requête est encore en cours de traitement ; réessayez dans un instant.' },
  'problem.service_unavailable': { en: 'The service is unavailable for a moment; try again shortly.', fr: 'Le service est indisponible pour un moment ; réessayez dans un instant.' },
  'problem.internal_error': { en: 'An unexpected error occurred; try again, and report it if it lasts.', fr: 'Une erreur inattendue s’est produite ; réessayez, et signalez-la si elle persiste.' },
});

/**
 * The codes whose `detail` says more than the table can (which value, which address, which domain):
 * in English the page shows the API's own sentence for them; in French the table's, which says the
 * same without the particulars.
 */
export const DETAIL_SAYS_MORE = new Set(['validation_failed', 'not_found', 'sso_required', 'identity_provider_not_found', 'issuer_refused', 'payload_too_large']);
