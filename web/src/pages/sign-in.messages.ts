// The sign-in page and its second step. Each key's English and French side by side.
import { pageMessages } from '../page-messages.js';

export const signInMessages = pageMessages({
  'signIn.title': { en: 'Sign in', fr: 'Connexion' },
  'signIn.email': { en: 'E-mail address', fr: 'Adresse e-mail' },
  'signIn.password': { en: 'Password', fr: 'Mot de passe' },
  'signIn.submit': { en: 'Sign in', fr: 'Se connecter' },
  'signIn.submitting': { en: 'Signing in…', fr: 'Connexion…' },
  'signIn.sessionEnded': { en: 'Your session has ended. Please sign in again.', fr: 'Votre session a pris fin. Veuillez vous reconnecter.' },
  'signIn.signedOut': { en: 'You are signed out.', fr: 'Vous êtes déconnecté.' },
  'signIn.secondStepTitle': { en: 'Second step', fr: 'Deuxième étape' },
  'signIn.totpHint': { en: 'Enter the 6-digit code your authenticator app shows for this back office.', fr: 'Saisissez le code à 6 chiffres que votre application d’authentification affiche pour ce back-office.' },
  'signIn.recoveryHint': { en: 'Enter one of the recovery codes you kept when you set up your second factor. Each works once.', fr: 'Saisissez l’un des codes de secours conservés lors de la configuration de votre second facteur. Chacun ne sert qu’une fois.' },
  'signIn.totpCode': { en: 'Code from the app', fr: 'Code de l’application' },
  'signIn.recoveryCode': { en: 'Recovery code', fr: 'Code de secours' },
  'signIn.verify': { en: 'Verify', fr: 'Vérifier' },
  'signIn.useRecovery': { en: 'Use a recovery code instead', fr: 'Utiliser plutôt un code de secours' },
  'signIn.useTotp': { en: 'Use the authenticator app instead', fr: 'Utiliser plutôt l’application' },
  'signIn.orPasskey': { en: 'Or, with a passkey saved on this device or in your password manager:', fr: 'Ou, avec une clé d’accès enregistrée sur cet appareil ou dans votre gestionnaire de mots de passe :' },
  'signIn.withPasskey': { en: 'Sign in with a passkey', fr: 'Se connecter avec une clé d’accès' },
  'signIn.passkeyHint': { en: 'Confirm with one of your passkeys (fingerprint, face or PIN on your device).', fr: 'Confirmez avec l’une de vos clés d’accès (empreinte, visage ou code sur votre appareil).' },
  'signIn.verifyPasskey': { en: 'Use my passkey', fr: 'Utiliser ma clé d’accès' },
  'signIn.usePasskey': { en: 'Use a passkey instead', fr: 'Utiliser plutôt une clé d’accès' },
  'signIn.restart': { en: 'Start again', fr: 'Recommencer' },
});
