// The e-mail address page. Each key's English and French side by side.
import { pageMessages } from '../page-messages.js';

export const emailMessages = pageMessages({
  'email.nav': { en: 'E-mail address', fr: 'Adresse e-mail' },
  'email.title': { en: 'My e-mail address', fr: 'Mon adresse e-mail' },
  'email.current': { en: 'Messages are sent to {email}.', fr: 'Les messages sont envoyés à {email}.' },
  'email.new': { en: 'New address', fr: 'Nouvelle adresse' },
  'email.hint': { en: 'A link is sent there; the address changes when you open it, signed in.', fr: 'Un lien y est envoyé ; l’adresse change quand vous l’ouvrez, connecté.' },
  'email.submit': { en: 'Send the link', fr: 'Envoyer le lien' },
  'email.sent': { en: 'A link was sent to {email}. Open it within 24 hours to confirm the change.', fr: 'Un lien a été envoyé à {email}. Ouvrez-le dans les 24 heures pour confirmer le changement.' },
  'email.confirmIntro': { en: 'You followed the link sent to your new address.', fr: 'Vous avez suivi le lien envoyé à votre nouvelle adresse.' },
  'email.confirm': { en: 'Confirm my new address', fr: 'Confirmer ma nouvelle adresse' },
  'email.confirmed': { en: 'Your address is now {email}. Your previous address was told.', fr: 'Votre adresse est désormais {email}. Votre ancienne adresse a été prévenue.' },
});
