// The page of my sessions. Each key's English and French side by side.
import { pageMessages } from '../page-messages.js';

export const sessionsMessages = pageMessages({
  'sessions.nav': { en: 'My sessions', fr: 'Mes sessions' },
  'sessions.title': { en: 'My sessions', fr: 'Mes sessions' },
  'sessions.othersConfirm': { en: 'Sign out of every other session?', fr: 'Fermer toutes les autres sessions ?' },
  'sessions.othersDone': { en: 'Your other sessions are signed out.', fr: 'Vos autres sessions sont fermées.' },
  'sessions.signOutOthers': { en: 'Sign out everywhere else', fr: 'Se déconnecter partout ailleurs' },
  'sessions.empty': { en: 'No active session.', fr: 'Aucune session active.' },
  'sessions.device': { en: 'Device', fr: 'Appareil' },
  'sessions.ip': { en: 'IP address', fr: 'Adresse IP' },
  'sessions.created': { en: 'Signed in', fr: 'Connexion' },
  'sessions.lastUsed': { en: 'Last active', fr: 'Dernière activité' },
  'sessions.current': { en: 'this session', fr: 'cette session' },
  'sessions.revoke': { en: 'Revoke', fr: 'Révoquer' },
  'sessions.revokeNamed': { en: 'Revoke the session on {device} from {ip}', fr: 'Révoquer la session {device} depuis {ip}' },
  'sessions.method': { en: 'Signed in with', fr: 'Connexion par' },
  'sessions.method.password': { en: 'password', fr: 'mot de passe' },
  'sessions.method.password_totp': { en: 'password + app code', fr: 'mot de passe + code d’application' },
  'sessions.method.password_recovery_code': { en: 'password + recovery code', fr: 'mot de passe + code de secours' },
  'sessions.method.password_passkey': { en: 'password + passkey', fr: 'mot de passe + clé d’accès' },
  'sessions.method.passkey': { en: 'passkey', fr: 'clé d’accès' },
  'sessions.method.oidc': { en: 'company sign-in', fr: 'connexion d’entreprise' },
  'sessions.method.oidc_provider_mfa': { en: 'company sign-in with its second factor', fr: 'connexion d’entreprise avec son second facteur' },
  'sessions.method.oidc_totp': { en: 'company sign-in + app code', fr: 'connexion d’entreprise + code d’application' },
  'sessions.method.oidc_recovery_code': { en: 'company sign-in + recovery code', fr: 'connexion d’entreprise + code de secours' },
  'sessions.method.oidc_passkey': { en: 'company sign-in + passkey', fr: 'connexion d’entreprise + clé d’accès' },
});
