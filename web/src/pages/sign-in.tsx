// The sign-in page: POST /sessions, then keep the token set. A person with a second factor gets a
// challenge instead (202): the page asks for a code from the authenticator app, or a recovery
// code, and sends it with the challenge to POST /sessions/second-factor.
import { useState } from 'preact/hooks';
import { api, call, tokens } from '../api/client.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { ErrorMessage, Field, Notice, PageTitle } from '../ui.js';
import { useSubmit } from '../load.js';

type Challenge = { challenge_token: string; methods: string[] };

export function SignInPage({ notice, onSignedIn }: { notice: MessageKey | null; onSignedIn: () => void }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [challenge, setChallenge] = useState<Challenge | null>(null);

  const { busy, error, submit } = useSubmit(async () => {
    const answer = await call(() => api.POST('/sessions', { body: { session: { email, password } } }));
    if ('second_factor' in answer) {
      setPassword('');
      setChallenge(answer.second_factor);
      return;
    }
    tokens.accept(answer);
    onSignedIn();
  });

  if (challenge) return <SecondStep challenge={challenge} onSignedIn={onSignedIn} onRestart={() => setChallenge(null)} />;
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

/** The second step: a code from the app, or (switching) a recovery code. */
function SecondStep({ challenge, onSignedIn, onRestart }: { challenge: Challenge; onSignedIn: () => void; onRestart: () => void }) {
  const { t } = useI18n();
  const [useRecovery, setUseRecovery] = useState(!challenge.methods.includes('totp'));
  const [code, setCode] = useState('');

  const { busy, error, submit } = useSubmit(async () => {
    const factor = useRecovery ? { recovery_code: code.trim() } : { totp_code: code.replace(/\s/g, '') };
    const set = await call(() => api.POST('/sessions/second-factor', { body: { challenge_token: challenge.challenge_token, ...factor } }));
    tokens.accept(set);
    onSignedIn();
  });

  return (
    <main id="main" class="sign-in" tabIndex={-1}>
      <PageTitle>{t('signIn.secondStepTitle')}</PageTitle>
      <p>{t(useRecovery ? 'signIn.recoveryHint' : 'signIn.totpHint')}</p>
      <form onSubmit={submit} aria-busy={busy}>
        {useRecovery ? (
          <Field key="recovery" label={t('signIn.recoveryCode')} id="recovery-code" name="recovery-code" autoComplete="off" required maxLength={32} value={code} onInput={(e: InputEvent) => setCode((e.currentTarget as HTMLInputElement).value)} />
        ) : (
          <Field key="totp" label={t('signIn.totpCode')} id="totp-code" name="totp-code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]{6,7}" required value={code} onInput={(e: InputEvent) => setCode((e.currentTarget as HTMLInputElement).value)} />
        )}
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          {busy ? t('signIn.submitting') : t('signIn.verify')}
        </button>
      </form>
      <div class="actions">
        {challenge.methods.includes('totp') && challenge.methods.includes('recovery_code') && (
          <button type="button" class="link" onClick={() => (setUseRecovery(!useRecovery), setCode(''))}>
            {t(useRecovery ? 'signIn.useTotp' : 'signIn.useRecovery')}
          </button>
        )}
        <button type="button" class="link" onClick={onRestart}>
          {t('signIn.restart')}
        </button>
      </div>
    </main>
  );
}
