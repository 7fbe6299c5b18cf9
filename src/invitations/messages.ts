// The invitation message, in the person's language. Built from the token as it is generated, never
// from anything stored: the link's token exists only in the message's body (docs/INVITATIONS.md).

export type Language = 'en' | 'fr';

/** Where the back office's accept page is: the link the person follows. */
export const acceptLink = (origin: string, token: string) => `${origin}/#/invitation?token=${encodeURIComponent(token)}`;

export function invitationMessage(language: Language, v: { link: string; inviter: string; expiresAt: Date }): { subject: string; body: string } {
  const until = v.expiresAt.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  if (language === 'fr') {
    return {
      subject: 'Invitation au back office',
      body: [
        'Bonjour,',
        '',
        `${v.inviter} vous invite à rejoindre le back office. Pour créer votre compte et choisir votre mot de passe, ouvrez ce lien :`,
        '',
        v.link,
        '',
        `Ce lien ne sert qu'une fois et expire le ${until}. Si vous n'attendiez pas cette invitation, ignorez ce message.`,
      ].join('\n'),
    };
  }
  return {
    subject: 'Your invitation to the back office',
    body: [
      'Hello,',
      '',
      `${v.inviter} invites you to the back office. To create your account and choose your password, open this link:`,
      '',
      v.link,
      '',
      `The link works once and expires on ${until}. If you were not expecting this invitation, ignore this message.`,
    ].join('\n'),
  };
}
