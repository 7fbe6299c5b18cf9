// The messages the platform sends (invitations, recovery, security notices), in one place: each kind
// in English and French, as plain text and as HTML made from the same words by `render`, which a
// feature's own messages use too (src/<feature>/messages.ts). Built from the values handed in when the change is made
// (a link's token exists only there and in the message: never read back from storage). The HTML
// escapes every value; a link is shown as its text too, for readers that block links.

export type Language = 'en' | 'fr';
export const LANGUAGES: readonly Language[] = ['en', 'fr'];

export interface RenderedMessage {
  subject: string;
  text: string;
  html: string;
}

/** A paragraph of the message: words, or a link (shown as a button and as its address). */
export type Block = { text: string } | { link: string; label: string };

/** A time as the messages write it: UTC, to the minute (the reader's zone is unknown). */
export function formatTime(at: Date, language: Language): string {
  const stamp = at.toISOString().slice(0, 16).replace('T', ' ');
  return language === 'fr' ? `${stamp} (UTC)` : `${stamp} UTC`;
}

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A message in the house's layout, from its subject and paragraphs: what every template, a feature's own included, is made with. */
export function render(language: Language, subject: string, blocks: Block[]): RenderedMessage {
  const text = blocks.map((b) => ('link' in b ? b.link : b.text)).join('\n\n');
  const body = blocks
    .map((b) =>
      'link' in b
        ? `<p><a href="${escapeHtml(b.link)}" style="display:inline-block;padding:10px 16px;background:#1f4fbf;color:#ffffff;text-decoration:none;border-radius:4px">${escapeHtml(b.label)}</a></p>\n<p style="font-size:13px;color:#555555">${escapeHtml(b.link)}</p>`
        : `<p>${escapeHtml(b.text)}</p>`,
    )
    .join('\n');
  const html = `<!doctype html>\n<html lang="${language}">\n<head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>\n<body style="font-family:sans-serif;font-size:15px;line-height:1.5;color:#222222">\n${body}\n</body>\n</html>\n`;
  return { subject, text: `${text}\n`, html };
}

/** A security notice: what happened, and what to do if it was not the person. */
function notice(language: Language, subject: string, what: string): RenderedMessage {
  return render(language, subject, [
    { text: language === 'fr' ? 'Bonjour,' : 'Hello,' },
    { text: what },
    { text: language === 'fr' ? "Si ce n'était pas vous ni un administrateur à votre demande, prévenez tout de suite un administrateur." : 'If it was not you, nor an administrator at your request, tell an administrator at once.' },
  ]);
}

const METHOD_NAMES: Record<string, Record<Language, string>> = {
  totp: { en: 'an authenticator app', fr: 'une application d’authentification' },
  passkey: { en: 'a passkey', fr: 'une clé d’accès' },
};
const methodName = (method: string, language: Language) => METHOD_NAMES[method]?.[language] ?? method;

export interface Templates {
  /** An administrator invites a person: the link opens the page where they choose their password. */
  invitation: { link: string; inviter: string; expiresAt: Date };
  /** "Forgot your password?", or an administrator sending the person a link. */
  password_reset: { link: string; expiresAt: Date; byAdministrator: boolean };
  /** A recovery asked for a person whose company signs them in: no password of ours to reset. */
  password_reset_sso: { provider: string; signInLink: string };
  /** The password was changed (by the person, or through a recovery link). */
  password_changed: { at: Date; through: 'change' | 'reset' };
  /** Security notices (src/mail/notices.ts): what changed on the account, and when. */
  second_factor_added: { at: Date; method: string };
  second_factor_removed: { at: Date; method: string };
  second_factors_reset: { at: Date };
  api_key_created: { at: Date; name: string };
  account_disabled: { at: Date };
  roles_changed: { at: Date; roles: string[] };
  /**
   * A sign-in from a device or browser not seen before for the person (src/auth/sessions/devices.ts):
   * when, from which address, and the browser and system recognised in its user agent (names from
   * a closed list, null when none is recognised: the user agent itself is the client's free text
   * and never goes into a message).
   */
  new_device_sign_in: { at: Date; address: string; browser: string | null; system: string | null };
}

export type MessageKind = keyof Templates;

const TEMPLATES: { [K in MessageKind]: Record<Language, (v: Templates[K]) => RenderedMessage> } = {
  invitation: {
    en: (v) =>
      render('en', 'Your invitation to the back office', [
        { text: 'Hello,' },
        { text: `${v.inviter} invites you to the back office. To create your account and choose your password, open this link:` },
        { link: v.link, label: 'Create my account' },
        { text: `The link works once and expires on ${formatTime(v.expiresAt, 'en')}. If you were not expecting this invitation, ignore this message.` },
      ]),
    fr: (v) =>
      render('fr', 'Invitation au back office', [
        { text: 'Bonjour,' },
        { text: `${v.inviter} vous invite à rejoindre le back office. Pour créer votre compte et choisir votre mot de passe, ouvrez ce lien :` },
        { link: v.link, label: 'Créer mon compte' },
        { text: `Ce lien ne sert qu'une fois et expire le ${formatTime(v.expiresAt, 'fr')}. Si vous n'attendiez pas cette invitation, ignorez ce message.` },
      ]),
  },
  password_reset: {
    en: (v) =>
      render('en', 'Choose a new password', [
        { text: 'Hello,' },
        { text: v.byAdministrator ? 'An administrator sent you this link to choose a new password for the back office:' : 'Someone (we hope you) asked to choose a new password for your back office account. Open this link to choose it:' },
        { link: v.link, label: 'Choose a new password' },
        { text: `The link works once and expires on ${formatTime(v.expiresAt, 'en')}. Choosing a new password signs you out everywhere; if you use a second factor, you will still need it to sign in.` },
        { text: 'If you did not ask for this, ignore this message: your password stays as it is.' },
      ]),
    fr: (v) =>
      render('fr', 'Choisissez un nouveau mot de passe', [
        { text: 'Bonjour,' },
        { text: v.byAdministrator ? 'Un administrateur vous envoie ce lien pour choisir un nouveau mot de passe du back office :' : "Quelqu'un (vous, espérons-le) a demandé à choisir un nouveau mot de passe pour votre compte du back office. Ouvrez ce lien pour le choisir :" },
        { link: v.link, label: 'Choisir un nouveau mot de passe' },
        { text: `Ce lien ne sert qu'une fois et expire le ${formatTime(v.expiresAt, 'fr')}. Choisir un nouveau mot de passe vous déconnecte partout ; si vous utilisez un second facteur, il vous sera toujours demandé à la connexion.` },
        { text: "Si vous n'avez rien demandé, ignorez ce message : votre mot de passe ne change pas." },
      ]),
  },
  password_reset_sso: {
    en: (v) =>
      render('en', 'How to sign in to the back office', [
        { text: 'Hello,' },
        { text: `Someone asked to choose a new password for your back office account. Your company signs you in through ${v.provider}: you have no back office password to reset. Sign in with ${v.provider} instead:` },
        { link: v.signInLink, label: 'Sign in' },
        { text: 'If you cannot sign in there, ask your company\'s support. If you did not ask for anything, ignore this message.' },
      ]),
    fr: (v) =>
      render('fr', 'Comment vous connecter au back office', [
        { text: 'Bonjour,' },
        { text: `Quelqu'un a demandé à choisir un nouveau mot de passe pour votre compte du back office. Votre entreprise vous connecte par ${v.provider} : vous n'avez pas de mot de passe du back office à changer. Connectez-vous plutôt avec ${v.provider} :` },
        { link: v.signInLink, label: 'Se connecter' },
        { text: "Si vous ne pouvez pas vous y connecter, demandez au support de votre entreprise. Si vous n'avez rien demandé, ignorez ce message." },
      ]),
  },
  password_changed: {
    en: (v) =>
      render('en', 'Your password was changed', [
        { text: 'Hello,' },
        { text: `The password of your back office account was changed on ${formatTime(v.at, 'en')}${v.through === 'reset' ? ' through a recovery link' : ''}, and your other sessions were ended.` },
        { text: 'If it was not you, ask an administrator to secure your account at once.' },
      ]),
    fr: (v) =>
      render('fr', 'Votre mot de passe a changé', [
        { text: 'Bonjour,' },
        { text: `Le mot de passe de votre compte du back office a été changé le ${formatTime(v.at, 'fr')}${v.through === 'reset' ? ' par un lien de récupération' : ''}, et vos autres sessions ont été fermées.` },
        { text: "Si ce n'était pas vous, demandez tout de suite à un administrateur de protéger votre compte." },
      ]),
  },
  second_factor_added: {
    en: (v) => notice('en', 'A second factor was added to your account', `A second factor (${methodName(v.method, 'en')}) was added to your back office account on ${formatTime(v.at, 'en')}.`),
    fr: (v) => notice('fr', 'Un second facteur a été ajouté à votre compte', `Un second facteur (${methodName(v.method, 'fr')}) a été ajouté à votre compte du back office le ${formatTime(v.at, 'fr')}.`),
  },
  second_factor_removed: {
    en: (v) => notice('en', 'A second factor was removed from your account', `A second factor (${methodName(v.method, 'en')}) was removed from your back office account on ${formatTime(v.at, 'en')}.`),
    fr: (v) => notice('fr', 'Un second facteur a été retiré de votre compte', `Un second facteur (${methodName(v.method, 'fr')}) a été retiré de votre compte du back office le ${formatTime(v.at, 'fr')}.`),
  },
  second_factors_reset: {
    en: (v) => notice('en', 'Your second factors were reset', `An administrator removed every second factor of your back office account on ${formatTime(v.at, 'en')}, and your sessions were ended.`),
    fr: (v) => notice('fr', 'Vos seconds facteurs ont été réinitialisés', `Un administrateur a retiré tous les seconds facteurs de votre compte du back office le ${formatTime(v.at, 'fr')}, et vos sessions ont été fermées.`),
  },
  api_key_created: {
    en: (v) => notice('en', 'An API key was created in your name', `The API key "${v.name}" was created in your name on ${formatTime(v.at, 'en')}. It acts with your rights at most.`),
    fr: (v) => notice('fr', 'Une clé d’API a été créée à votre nom', `La clé d’API « ${v.name} » a été créée à votre nom le ${formatTime(v.at, 'fr')}. Elle agit au plus avec vos droits.`),
  },
  account_disabled: {
    en: (v) => notice('en', 'Your account was disabled', `Your back office account was disabled on ${formatTime(v.at, 'en')}, and your sessions were ended.`),
    fr: (v) => notice('fr', 'Votre compte a été désactivé', `Votre compte du back office a été désactivé le ${formatTime(v.at, 'fr')}, et vos sessions ont été fermées.`),
  },
  roles_changed: {
    en: (v) => notice('en', 'Your roles changed', `Your roles in the back office changed on ${formatTime(v.at, 'en')}. They are now: ${v.roles.length ? v.roles.join(', ') : 'none'}.`),
    fr: (v) => notice('fr', 'Vos rôles ont changé', `Vos rôles dans le back office ont changé le ${formatTime(v.at, 'fr')}. Ce sont maintenant : ${v.roles.length ? v.roles.join(', ') : 'aucun'}.`),
  },
  new_device_sign_in: {
    en: (v) =>
      render('en', 'A sign-in from a new device or browser', [
        { text: 'Hello,' },
        { text: `Your back office account was signed in to on ${formatTime(v.at, 'en')} from a device or browser not seen before for you: ${deviceName(v, 'en')}, from the address ${v.address}.` },
        { text: 'If it was you, there is nothing to do. If it was not, someone else can sign in as you: change your password at once and tell an administrator, who can end that session.' },
      ]),
    fr: (v) =>
      render('fr', 'Une connexion depuis un nouvel appareil ou navigateur', [
        { text: 'Bonjour,' },
        { text: `Une connexion à votre compte du back office a eu lieu le ${formatTime(v.at, 'fr')} depuis un appareil ou un navigateur jamais vu pour vous : ${deviceName(v, 'fr')}, depuis l’adresse ${v.address}.` },
        { text: 'Si c’était vous, il n’y a rien à faire. Sinon, quelqu’un d’autre peut se connecter à votre place : changez tout de suite votre mot de passe et prévenez un administrateur, qui peut fermer cette session.' },
      ]),
  },
};

/** "Firefox on Linux", "Firefox", "a browser on Linux", or the words for an unrecognised one. */
function deviceName(v: { browser: string | null; system: string | null }, language: Language): string {
  if (language === 'fr') {
    if (v.browser) return v.system ? `${v.browser} sous ${v.system}` : v.browser;
    return v.system ? `un navigateur sous ${v.system}` : 'un navigateur ou un programme non reconnu';
  }
  if (v.browser) return v.system ? `${v.browser} on ${v.system}` : v.browser;
  return v.system ? `a browser on ${v.system}` : 'an unrecognised browser or program';
}

/** The message of this kind, in this language, with these values. */
export function renderMessage<K extends MessageKind>(kind: K, language: Language, values: Templates[K]): RenderedMessage {
  return TEMPLATES[kind][language](values);
}

/** A language the messages are written in: the one asked for when there is one, else English. */
export const languageOr = (value: string | null | undefined): Language => (value === 'fr' ? 'fr' : 'en');
