// "Forgot your password?", the page a recovery link opens, and the development mailbox. Each key's
// English and French side by side.
import { pageMessages } from '../page-messages.js';

export const passwordResetMessages = pageMessages({
  'passwordReset.forgot': { en: 'Forgot your password?', fr: 'Mot de passe oublié ?' },
  'passwordReset.askTitle': { en: 'Forgot your password?', fr: 'Mot de passe oublié ?' },
  'passwordReset.askIntro': {
    en: 'Type the e-mail address of your account: we send it a link to choose a new password, valid for 30 minutes.',
    fr: 'Indiquez l’adresse e-mail de votre compte : nous y envoyons un lien pour choisir un nouveau mot de passe, valable 30 minutes.',
  },
  'passwordReset.email': { en: 'E-mail address', fr: 'Adresse e-mail' },
  'passwordReset.send': { en: 'Send me a link', fr: 'M’envoyer un lien' },
  'passwordReset.sending': { en: 'Sending…', fr: 'Envoi…' },
  'passwordReset.sent': {
    en: 'If an account has this address, a message with a link is on its way. Check your mailbox (and its spam folder).',
    fr: 'Si un compte a cette adresse, un message avec un lien est en route. Regardez votre boîte de réception (et les indésirables).',
  },
  'passwordReset.back': { en: 'Back to sign-in', fr: 'Retour à la connexion' },
  'passwordReset.title': { en: 'Choose a new password', fr: 'Choisissez un nouveau mot de passe' },
  'passwordReset.intro': {
    en: 'Choose your new password. You will then sign in with it; every other session of yours ends.',
    fr: 'Choisissez votre nouveau mot de passe. Vous vous connecterez ensuite avec lui ; vos autres sessions se terminent.',
  },
  'passwordReset.password': { en: 'New password (12 characters or more)', fr: 'Nouveau mot de passe (12 caractères ou plus)' },
  'passwordReset.submit': { en: 'Set my new password', fr: 'Enregistrer mon nouveau mot de passe' },
  'passwordReset.done': { en: 'Your password is changed. Sign in with it.', fr: 'Votre mot de passe est changé. Connectez-vous avec lui.' },
  'passwordReset.noToken': { en: 'This link holds no recovery token. Open the link of the message you received.', fr: 'Ce lien ne contient pas de jeton de récupération. Ouvrez le lien du message reçu.' },
  'passwordReset.invalid': { en: 'This link is used, replaced or expired. Ask for a new one.', fr: 'Ce lien a déjà servi, a été remplacé ou a expiré. Demandez-en un nouveau.' },
  'devMailbox.title': { en: 'Development mailbox', fr: 'Boîte mail de développement' },
  'devMailbox.warning': {
    en: 'Development mailbox: nothing is sent by e-mail on this server (no SMTP_URL). The messages the back office would send are shown here, links included, to administrators only. Production never has this page.',
    fr: 'Boîte mail de développement : ce serveur n’envoie aucun e-mail (pas de SMTP_URL). Les messages que le back office enverrait sont montrés ici, liens compris, aux seuls administrateurs. La production n’a jamais cette page.',
  },
  'devMailbox.open': { en: 'Open the development mailbox', fr: 'Ouvrir la boîte mail de développement' },
  'devMailbox.empty': { en: 'No message yet.', fr: 'Aucun message pour l’instant.' },
  'devMailbox.to': { en: 'To {recipient}', fr: 'À {recipient}' },
  'devMailbox.off': { en: 'The development mailbox is off on this server: messages are sent by e-mail.', fr: 'La boîte mail de développement est désactivée sur ce serveur : les messages partent par e-mail.' },
});
