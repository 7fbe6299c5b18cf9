// The sign-in page: POST /sessions, then keep the token set. A person with a second factor gets a
// challenge instead (202): the page asks for a passkey, a code from the authenticator app, or a
// recovery code, and sends it with the challenge to POST /sessions/second-factor. "Sign in with a
// passkey" skips the password: POST /sessions/passkey/challenge, the browser's passkey, then
// POST /sessions/passkey.
import { useState } from 'preact/hooks';
import { api, call, tokens } from '../api/client.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { ErrorMessage, Field, Notice, PageTitle } from '../ui.js';
import { useSubmit } from '../load.js';
import { usePasskey } from '../passkeys.js';

type Challenge = { challenge_token: string; methods: string[]; passkey_options?: Record<string, unknown> };
type Method = 'passkey' | 'totp' | 'recovery_code';

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
  const withPasskey = useSubmit(async () => {
    const { options } = await call(() => api.POST('/sessions/passkey/challenge'));
    const credential = await usePasskey(options);
    tokens.accept(await call(() => api.POST('/sessions/passkey', { body: { credential } })));
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
      <div class="passkey-sign-in">
        <p>{t('signIn.orPasskey')}</p>
        <ErrorMessage error={withPasskey.error} />
        <button type="button" class="secondary" disabled={withPasskey.busy} onClick={withPasskey.submit}>
          {withPasskey.busy ? t('signIn.submitting') : t('signIn.withPasskey')}
        </button>
      </div>
    </main>
  );
}

/** The second step: a passkey, a code from the app, or (switching) a recovery code. */
function SecondStep({ challenge, onSignedIn, onRestart }: { challenge: Challenge; onSignedIn: () => void; onRestart: () => void }) {
  const { t } = useI18n();
  const offered = (['passkey', 'totp', 'recovery_code'] as const).filter((m) => challenge.methods.includes(m) && (m !== 'passkey' || challenge.passkey_options));
  const [method, setMethod] = useState<Method>(offered[0] ?? 'recovery_code');
  const [code, setCode] = useState('');

  const { busy, error, submit } = useSubmit(async () => {
    const factor = method === 'passkey' ? { passkey: await usePasskey(challenge.passkey_options!) } : method === 'recovery_code' ? { recovery_code: code.trim() } : { totp_code: code.replace(/\s/g, '') };
    const set = await call(() => api.POST('/sessions/second-factor', { body: { challenge_token: challenge.challenge_token, ...factor } }));
    tokens.accept(set);
    onSignedIn();
  });
  const hints: Record<Method, MessageKey> = { passkey: 'signIn.passkeyHint', totp: 'signIn.totpHint', recovery_code: 'signIn.recoveryHint' };
  const switches: Record<Method, MessageKey> = { passkey: 'signIn.usePasskey', totp: 'signIn.useTotp', recovery_code: 'signIn.useRecovery' };

  return (
    <main id="main" class="sign-in" tabIndex={-1}>
      <PageTitle>{t('signIn.secondStepTitle')}</PageTitle>
      <p>{t(hints[method])}</p>
      <form onSubmit={submit} aria-busy={busy}>
        {method === 'recovery_code' ? (
          <Field key="recovery" label={t('signIn.recoveryCode')} id="recovery-code" name="recovery-code" autoComplete="off" required maxLength={32} value={code} onInput={(e: InputEvent) => setCode((e.currentTarget as HTMLInputElement).value)} />
        ) : method === 'totp' ? (
          <Field key="totp" label={t('signIn.totpCode')} id="totp-code" name="totp-code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]{6,7}" required value={code} onInput={(e: InputEvent) => setCode((e.currentTarget as HTMLInputElement).value)} />
        ) : null}
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          {busy ? t('signIn.submitting') : t(method === 'passkey' ? 'signIn.verifyPasskey' : 'signIn.verify')}
        </button>
      </form>
      <div class="actions">
        {offered
          .filter((m) => m !== method)
          .map((m) => (
            <button key={m} type="button" class="link" onClick={() => (setMethod(m), setCode(''))}>
              {t(switches[m])}
            </button>
          ))}
        <button type="button" class="link" onClick={onRestart}>
          {t('signIn.restart')}
        </button>
      </div>
    </main>
  );
}
