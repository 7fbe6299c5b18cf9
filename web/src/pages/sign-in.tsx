// The sign-in page: POST /sessions, then keep the token set.
import { useState } from 'preact/hooks';
import { api, call, tokens } from '../api/client.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { ErrorMessage, Field, Notice, PageTitle } from '../ui.js';
import { useSubmit } from '../load.js';

export function SignInPage({ notice, onSignedIn }: { notice: MessageKey | null; onSignedIn: () => void }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');

  const { busy, error, submit } = useSubmit(async () => {
    const tokenSet = await call(() => api.POST('/sessions', { body: { session: { email, password } } }));
    tokens.accept(tokenSet);
    onSignedIn();
  });

  return (
    <main id="main" class="sign-in" tabIndex={-1}>
      <PageTitle>{t('signIn.title')}</PageTitle>
      {notice && <Notice tone="warning">{t(notice)}</Notice>}
      <form onSubmit={submit} aria-busy={busy}>
        <Field label={t('signIn.email')} id="email" name="email" type="email" autoComplete="username" required value={email} onInput={(e: InputEvent) => setEmail((e.currentTarget as HTMLInputElement).value)} />
        <Field label={t('signIn.password')} id="password" name="password" type="password" autoComplete="current-password" required value={password} onInput={(e: InputEvent) => setPassword((e.currentTarget as HTMLInputElement).value)} />
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          {busy ? t('signIn.submitting') : t('signIn.submit')}
        </button>
      </form>
    </main>
  );
}
