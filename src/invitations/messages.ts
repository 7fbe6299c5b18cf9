// Where the invitation's link leads. The message itself is one of the templates of src/mail
// (src/mail/templates.ts, `invitation`), built from the token as it is generated, never from
// anything stored: the link's token exists only in the message (docs/INVITATIONS.md).

/** Where the back office's accept page is: the link the person follows. */
export const acceptLink = (origin: string, token: string) => `${origin}/#/invitation?token=${encodeURIComponent(token)}`;
