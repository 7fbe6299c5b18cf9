// The messages of an address change, in both languages, in the house's layout (src/mail/templates.ts):
// the link to the new address, and the word to the old one once the change is made.
import { formatTime, render, type Language, type RenderedMessage } from '../mail/templates.js';

/** The link the message to the new address carries: the back office's page that confirms it (signed in). */
export const confirmationLink = (backOffice: string, token: string) => `${backOffice}/#/email/${encodeURIComponent(token)}`;

export function confirmationMessage(language: Language, v: { link: string; expiresAt: Date }): RenderedMessage {
  return language === 'fr'
    ? render('fr', 'Confirmez votre nouvelle adresse e-mail', [
        { text: 'Bonjour,' },
        { text: 'Vous avez demandé que le back-office vous écrive désormais à cette adresse. Pour le confirmer, ouvrez ce lien et connectez-vous :' },
        { link: v.link, label: 'Confirmer cette adresse' },
        { text: `Ce lien fonctionne une fois, jusqu’au ${formatTime(v.expiresAt, 'fr')}. Si vous n’avez rien demandé, ignorez ce message : rien ne change.` },
      ])
    : render('en', 'Confirm your new e-mail address', [
        { text: 'Hello,' },
        { text: 'You asked the back office to write to you at this address from now on. To confirm it, open this link and sign in:' },
        { link: v.link, label: 'Confirm this address' },
        { text: `The link works once, until ${formatTime(v.expiresAt, 'en')}. If you did not ask for this, ignore this message: nothing changes.` },
      ]);
}

export function changedMessage(language: Language, v: { newEmail: string; at: Date }): RenderedMessage {
  return language === 'fr'
    ? render('fr', 'Votre adresse e-mail a été modifiée', [
        { text: 'Bonjour,' },
        { text: `Le ${formatTime(v.at, 'fr')}, l’adresse de votre compte du back-office est devenue ${v.newEmail}. Les messages ne seront plus envoyés ici.` },
        { text: 'Si ce n’était pas vous, prévenez tout de suite un administrateur.' },
      ])
    : render('en', 'Your e-mail address was changed', [
        { text: 'Hello,' },
        { text: `On ${formatTime(v.at, 'en')}, the address of your back-office account became ${v.newEmail}. Messages will no longer be sent here.` },
        { text: 'If it was not you, tell an administrator at once.' },
      ]);
}
