// "Forgot your password?" (POST /password-resets: the same answer whatever the address), the page a
// recovery link opens (POST /password-resets/confirm: no sign-in, the person signs in afterwards),
// and the development mailbox (GET /dev-mailbox/messages, outside the contract, only where the
// server has it on: docs/MAIL.md).
import type { PageProps } from '../page-entry.js';
import { useState } from 'preact/hooks';
import { api, call, tokens } from '../api/client.js';
import { ApiError } from '../api/problem.js';
import { useI18n } from '../i18n.js';
import { href } from '../router.js';
import { Empty, ErrorMessage, Field, Loading, Notice, PageTitle } from '../ui.js';
import { useLoad, useSubmit } from '../load.js';

export function ForgotPasswordPage() {
  const { t, language } = useI18n();
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const ask = useSubmit(async () => {
    await call(() => api.POST('/password-resets', { body: { email, language } }));
    setSent(true);
  });
  return (
    <main id="main" class="sign-in" tabIndex={-1}>
      <PageTitle>{t('passwordReset.askTitle')}</PageTitle>
      {sent ? (
        <Notice tone="success">{t('passwordReset.sent')}</Notice>
      ) : (
        <form onSubmit={ask.submit} aria-busy={ask.busy}>
          <p>{t('passwordReset.askIntro')}</p>
          <Field label={t('passwordReset.email')} id="email" type="email" autoComplete="username" required value={email} onInput={(e: InputEvent) => setEmail((e.currentTarget as HTMLInputElement).value)} />
          <ErrorMessage error={ask.error} />
          <button type="submit" disabled={ask.busy}>
            {ask.busy ? t('passwordReset.sending') : t('passwordReset.send')}
          </button>
        </form>
      )}
      <p>
        <a href={href('sign-in')}>{t('passwordReset.back')}</a>
      </p>
    </main>
  );
}

/** The token of the link (`#/password-reset?token=...`), or null. */
function resetToken(): string | null {
  return new URLSearchParams(window.location.hash.split('?')[1] ?? '').get('token');
}

export function ResetPasswordPage() {
  const { t } = useI18n();
  const token = resetToken();
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const [spent, setSpent] = useState(false);
  const confirm = useSubmit(async () => {
    if (!token) return;
    try {
      await call(() => api.POST('/password-resets/confirm', { body: { token, new_password: password } }));
    } catch (err) {
      if (err instanceof ApiError && err.problem?.code === 'invalid_password_reset') setSpent(true);
      throw err;
    }
    // Every session of the person ended (this tab's too, if it had one: its next call finds it over).
    setDone(true);
  });
  return (
    <main id="main" class="sign-in" tabIndex={-1}>
      <PageTitle>{t('passwordReset.title')}</PageTitle>
      {done ? (
        <Notice tone="success">{t('passwordReset.done')}</Notice>
      ) : !token ? (
        <Notice tone="warning">{t('passwordReset.noToken')}</Notice>
      ) : (
        <form onSubmit={confirm.submit} aria-busy={confirm.busy}>
          <p>{t('passwordReset.intro')}</p>
          {spent && <Notice tone="warning">{t('passwordReset.invalid')}</Notice>}
          <Field label={t('passwordReset.password')} id="new-password" type="password" autoComplete="new-password" minLength={12} required value={password} onInput={(e: InputEvent) => setPassword((e.currentTarget as HTMLInputElement).value)} />
          <ErrorMessage error={confirm.error} />
          <button type="submit" disabled={confirm.busy}>
            {t('passwordReset.submit')}
          </button>
        </form>
      )}
      <p>
        <a href={done ? href('sign-in') : href('forgot-password')}>{done ? t('passwordReset.back') : t('passwordReset.forgot')}</a>
      </p>
    </main>
  );
}

interface MailboxMessage {
  id: string;
  recipient: string;
  kind: string;
  language: string;
  subject: string;
  text: string;
  created_at: string;
}

/** The development mailbox's messages; null when the server has none (404: it is off). */
async function loadMailbox(): Promise<MailboxMessage[] | null> {
  const token = await tokens.accessToken();
  const response = await fetch('/dev-mailbox/messages', { headers: { Authorization: `Bearer ${token ?? ''}`, Accept: 'application/json' } });
  if (response.status === 404) return null;
  const body = (await response.json()) as { data?: MailboxMessage[] };
  if (!response.ok) throw new ApiError(response, body as never);
  return body.data ?? [];
}

/** A link to the development mailbox, shown only where the server has one (the invitations page). */
export function DevMailboxLink() {
  const { t } = useI18n();
  const mailbox = useLoad(() => loadMailbox().catch(() => null), []);
  if (!mailbox.data) return null;
  return (
    <Notice tone="warning">
      <a href={href('dev-mailbox')}>{t('devMailbox.open')}</a>
    </Notice>
  );
}

/** Text with its links made clickable (a message's link is followed from here in development). */
function Linked({ text }: { text: string }) {
  const parts = text.split(/(https?:\/\/\S+)/g);
  return <>{parts.map((part, i) => (i % 2 === 1 ? <a key={i} href={part}>{part}</a> : part))}</>;
}

export function DevMailboxPage() {
  const { t, formatDate } = useI18n();
  const mailbox = useLoad(loadMailbox, []);
  return (
    <>
      <PageTitle>{t('devMailbox.title')}</PageTitle>
      <Notice tone="warning">{t('devMailbox.warning')}</Notice>
      {mailbox.error ? (
        <ErrorMessage error={mailbox.error} onRetry={mailbox.reload} />
      ) : mailbox.loading ? (
        <Loading />
      ) : mailbox.data === null ? (
        <Notice>{t('devMailbox.off')}</Notice>
      ) : mailbox.data!.length === 0 ? (
        <Empty>{t('devMailbox.empty')}</Empty>
      ) : (
        <ul class="dev-mailbox">
          {mailbox.data!.map((m) => (
            <li key={m.id}>
              <article aria-label={m.subject} lang={m.language}>
                <h2>{m.subject}</h2>
                <p>
                  {t('devMailbox.to', { recipient: m.recipient })} · <time dateTime={m.created_at}>{formatDate(m.created_at)}</time>
                </p>
                <pre class="message-body">
                  <Linked text={m.text} />
                </pre>
              </article>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** The development mailbox as the router opens it (its entry: dev-mailbox.entry.ts). */
export const DevMailboxRoute = (_: PageProps) => <DevMailboxPage />;
