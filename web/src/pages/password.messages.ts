// The password page. Each key's English and French side by side.
import { pageMessages } from '../page-messages.js';

export const passwordMessages = pageMessages({
  'password.nav': { en: 'Password', fr: 'Mot de passe' },
  'password.title': { en: 'Change my password', fr: 'Changer mon mot de passe' },
  'password.done': { en: 'Your password is changed. Your other sessions were signed out.', fr: 'Votre mot de passe est changé. Vos autres sessions ont été fermées.' },
  'password.current': { en: 'Current password', fr: 'Mot de passe actuel' },
  'password.new': { en: 'New password', fr: 'Nouveau mot de passe' },
  'password.policy': { en: '12 to 128 characters; common passwords are refused.', fr: '12 à 128 caractères ; les mots de passe courants sont refusés.' },
  'password.confirm': { en: 'New password again', fr: 'Nouveau mot de passe, à nouveau' },
  'password.mismatch': { en: 'The two new passwords differ.', fr: 'Les deux nouveaux mots de passe diffèrent.' },
  'password.submit': { en: 'Change my password', fr: 'Changer mon mot de passe' },
  'password.requiredTitle': { en: 'Choose your own password', fr: 'Choisissez votre mot de passe' },
  'password.requiredNotice': { en: 'Your password was set by someone else. Choose your own to continue: until then nothing else is available.', fr: 'Votre mot de passe a été choisi par quelqu’un d’autre. Choisissez le vôtre pour continuer : rien d’autre n’est possible d’ici là.' },
});
