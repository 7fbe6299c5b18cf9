// My e-mail address: asking to change it (POST /me/email-change, with a fresh proof) sends a link to
// the new address; the link opens this page with its token (#/email/<token>), where confirming
// (POST /me/email-change/confirm) makes the change. The old address is told by the server.
import type { PageProps } from '../page-entry.js';
import { useState } from 'preact/hooks';
import { api, call } from '../api/client.js';
import { useI18n } from '../i18n.js';
import { useLoad, useSubmit } from '../load.js';
import { navigate } from '../router.js';
import { ErrorMessage, Field, Loading, Notice, PageTitle } from '../ui.js';

export function EmailPage({ token }: { token?: string | undefined }) {
  const { t, language } = useI18n();
  const me = useLoad(() => call(() => api.GET('/me')), []);
  const [email, setEmail] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [confirmed, setConfirmed] = useState(false);

  const asking = useSubmit(async () => {
    setSentTo(null);
    await call(() => api.POST('/me/email-change', { body: { email, language } }));
    setSentTo(email);
    setEmail('');
  });
  const confirming = useSubmit(async () => {
    await call(() => api.POST('/me/email-change/confirm', { body: { token: token! } }));
    setConfirmed(true);
    me.reload();
    // The token is spent: it leaves the address bar.
    navigate('email');
  });

  if (!me.data) return me.error ? <ErrorMessage error={me.error} onRetry={me.reload} /> : <Loading />;
  return (
    <>
      <PageTitle>{t('email.title')}</PageTitle>
      {confirmed && <Notice tone="success">{t('email.confirmed', { email: me.data.user.email })}</Notice>}
      <p>{t('email.current', { email: me.data.user.email })}</p>
      {token !== undefined && (
        <form onSubmit={confirming.submit} class="narrow">
          <p>{t('email.confirmIntro')}</p>
          <ErrorMessage error={confirming.error} />
          <button type="submit" disabled={confirming.busy}>
            {confirming.busy ? t('common.saving') : t('email.confirm')}
          </button>
        </form>
      )}
      {sentTo !== null && <Notice tone="success">{t('email.sent', { email: sentTo })}</Notice>}
      <form onSubmit={asking.submit} class="narrow">
        <Field label={t('email.new')} id="new-email" type="email" autoComplete="email" required maxLength={254} hint={t('email.hint')} value={email} onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)} />
        <ErrorMessage error={asking.error} />
        <button type="submit" disabled={asking.busy}>
          {asking.busy ? t('common.saving') : t('email.submit')}
        </button>
      </form>
    </>
  );
}

/** The page as the navigation opens it (its entry: email.entry.ts); the second segment is a link's token. */
export const Route = ({ id }: PageProps) => <EmailPage token={id} />;
