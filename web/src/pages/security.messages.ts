// The security page (second factors). Each key's English and French side by side.
import { pageMessages } from '../page-messages.js';

export const securityMessages = pageMessages({
  'security.title': { en: 'Security', fr: 'Sécurité' },
  'security.requiredNotice': { en: 'Your role requires a second factor. Set up an authenticator app to continue: until then nothing else is available.', fr: 'Votre rôle exige un second facteur. Configurez une application d’authentification pour continuer : rien d’autre n’est disponible d’ici là.' },
  'security.totpTitle': { en: 'Authenticator app', fr: 'Application d’authentification' },
  'security.totpNone': { en: 'No authenticator app is set up. With one, signing in asks for a code from your phone after the password.', fr: 'Aucune application d’authentification n’est configurée. Avec une application, la connexion demande un code de votre téléphone après le mot de passe.' },
  'security.totpStart': { en: 'Set up an authenticator app', fr: 'Configurer une application d’authentification' },
  'security.scan': { en: 'Scan this QR code with your authenticator app (any app for 6-digit codes), then enter the code it shows.', fr: 'Scannez ce QR code avec votre application d’authentification (toute application à codes à 6 chiffres), puis saisissez le code affiché.' },
  'security.qrAlt': { en: 'QR code of the key for your authenticator app', fr: 'QR code de la clé pour votre application d’authentification' },
  'security.typeKey': { en: 'Or type this key into the app:', fr: 'Ou saisissez cette clé dans l’application :' },
  'security.confirmCode': { en: 'Code shown by the app', fr: 'Code affiché par l’application' },
  'security.confirm': { en: 'Confirm', fr: 'Confirmer' },
  'security.totpEnrolled': { en: 'Set up on {date}.', fr: 'Configurée le {date}.' },
  'security.totpLastUsed': { en: 'Last used to sign in on {date}.', fr: 'Dernière connexion avec un code le {date}.' },
  'security.totpNeverUsed': { en: 'Not used to sign in yet.', fr: 'Pas encore utilisée pour se connecter.' },
  'security.codesRemaining': { en: 'Recovery codes left: {count}.', fr: 'Codes de secours restants : {count}.' },
  'security.regenerate': { en: 'New recovery codes', fr: 'Nouveaux codes de secours' },
  'security.regenerateConfirm': { en: 'Make 10 new recovery codes? The ones you have stop working.', fr: 'Créer 10 nouveaux codes de secours ? Ceux que vous avez ne fonctionneront plus.' },
  'security.remove': { en: 'Remove the app', fr: 'Retirer l’application' },
  'security.removeConfirm': { en: 'Remove the authenticator app? Signing in will no longer ask for a code.', fr: 'Retirer l’application d’authentification ? La connexion ne demandera plus de code.' },
  'security.codesTitle': { en: 'Your recovery codes', fr: 'Vos codes de secours' },
  'security.codesOnce': { en: 'Keep them somewhere safe now: they will not be shown again. Each signs you in once if you lose your phone.', fr: 'Conservez-les en lieu sûr maintenant : ils ne seront plus affichés. Chacun vous connecte une fois si vous perdez votre téléphone.' },
  'security.download': { en: 'Download', fr: 'Télécharger' },
  'security.codesDone': { en: 'I have kept them', fr: 'Je les ai conservés' },
});
