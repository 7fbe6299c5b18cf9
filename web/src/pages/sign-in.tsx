// The sign-in page: POST /sessions, then keep the token set. A person with a second factor gets a
// challenge instead (202): the page asks for a passkey, a code from the authenticator app, or a
// recovery code, and sends it with the challenge to POST /sessions/second-factor. "Sign in with a
// passkey" skips the password: POST /sessions/passkey/challenge, the browser's passkey, then
// POST /sessions/passkey.
// Company sign-in (docs/IDENTITY.md): once the e-mail looks whole, POST /sessions/oidc asks whether
// a provider answers for its domain; if so a "Sign in with ..." button sends the browser there, the
// flow token kept in this tab's sessionStorage (it binds the flow to this tab: login CSRF). The
// provider sends the browser back to /sign-in/oidc (OIDC_REDIRECT_URI, served the page like any
// other), where ProviderReturn finishes at POST /sessions/oidc/callback.
import { useEffect, useState } from 'preact/hooks';
import { api, call, tokens } from '../api/client.js';
import { ApiError } from '../api/problem.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { ErrorMessage, Field, Notice, PageTitle } from '../ui.js';
import { useSubmit } from '../load.js';
import { usePasskey } from '../passkeys.js';
import { href } from '../router.js';

type Challenge = { challenge_token: string; methods: string[]; passkey_options?: Record<string, unknown> };
type Method = 'passkey' | 'totp' | 'recovery_code';
type Started = { authorization_url: string; flow_token: string; provider: { id: string; name: string } };

/** Where the provider sends the browser back (the path of OIDC_REDIRECT_URI). */
const RETURN_PATH = '/sign-in/oidc';
const FLOW_KEY = 'backoffice.oidcFlow';

/** A flow started for this e-mail's domain, or null when no provider answers for it. */
async function startAtProvider(email: string): Promise<Started | null> {
  const { data, error, response } = await api.POST('/sessions/oidc', { body: { email } });
  if (data) return data;
  if (response.status === 404 || response.status === 400) return null;
  throw new ApiError(response, error);
}

function goToProvider(started: Started) {
  window.sessionStorage.setItem(FLOW_KEY, started.flow_token);
  window.location.assign(started.authorization_url);
}

export function SignInPage({ notice, onSignedIn }: { notice: MessageKey | null; onSignedIn: () => void }) {
  if (window.location.pathname === RETURN_PATH) return <ProviderReturn onSignedIn={onSignedIn} />;
  return <PasswordSignIn notice={notice} onSignedIn={onSignedIn} />;
}

function PasswordSignIn({ notice, onSignedIn }: { notice: MessageKey | null; onSignedIn: () => void }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  const [provider, setProvider] = useState<Started | null>(null);
  const [ssoRequired, setSsoRequired] = useState(false);

  // The provider of the e-mail's domain: asked once the address looks whole, after a pause in typing.
  useEffect(() => {
    setProvider(null);
    setSsoRequired(false);
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) return;
    let current = true;
    const timer = window.setTimeout(() => {
      startAtProvider(email)
        .then((started) => current && setProvider(started))
        .catch(() => undefined);
    }, 400);
    return () => {
      current = false;
      window.clearTimeout(timer);
    };
  }, [email]);

  const { busy, error, submit } = useSubmit(async () => {
    let answer;
    try {
      answer = await call(() => api.POST('/sessions', { body: { session: { email, password } } }));
    } catch (err) {
      if (err instanceof ApiError && err.problem?.code === 'sso_required') setSsoRequired(true);
      throw err;
    }
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
      {ssoRequired && <Notice tone="warning">{t('signIn.ssoRequired')}</Notice>}
      <form onSubmit={submit} aria-busy={busy}>
        <Field label={t('signIn.email')} id="email" name="email" type="email" autoComplete="username" required value={email} onInput={(e: InputEvent) => setEmail((e.currentTarget as HTMLInputElement).value)} />
        {provider && (
          <div class="provider-sign-in">
            <button type="button" onClick={() => goToProvider(provider)}>
              {t('signIn.withProvider', { provider: provider.provider.name })}
            </button>
            <p>{t('signIn.orPassword')}</p>
          </div>
        )}
        <Field label={t('signIn.password')} id="password" name="password" type="password" autoComplete="current-password" required value={password} onInput={(e: InputEvent) => setPassword((e.currentTarget as HTMLInputElement).value)} />
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          {busy ? t('signIn.submitting') : t('signIn.submit')}
        </button>
        <p class="forgot-password">
          <a href={href('forgot-password')}>{t('passwordReset.forgot')}</a>
        </p>
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

/** Back from the provider at /sign-in/oidc: its code and state, with this tab's flow token, to the callback. */
function ProviderReturn({ onSignedIn }: { onSignedIn: () => void }) {
  const { t } = useI18n();
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  const [error, setError] = useState<unknown>(null);
  // The page's address becomes the back office's again (a reload must not send the code twice).
  const leave = () => window.history.replaceState(null, '', '/');

  useEffect(() => {
    const query = new URLSearchParams(window.location.search);
    const flowToken = window.sessionStorage.getItem(FLOW_KEY) ?? '';
    window.sessionStorage.removeItem(FLOW_KEY);
    const code = query.get('code');
    const state = query.get('state');
    const iss = query.get('iss');
    leave();
    if (!code || !state || !flowToken) {
      setError(new Error(query.get('error_description') ?? query.get('error') ?? t('signIn.providerFailed')));
      return;
    }
    call(() => api.POST('/sessions/oidc/callback', { body: { code, state, flow_token: flowToken, ...(iss ? { iss } : {}) } }))
      .then((answer) => {
        if ('second_factor' in answer) return setChallenge(answer.second_factor);
        tokens.accept(answer);
        onSignedIn();
      })
      .catch(setError);
  }, []);

  if (challenge) return <SecondStep challenge={challenge} onSignedIn={onSignedIn} onRestart={() => window.location.assign('/')} />;
  return (
    <main id="main" class="sign-in" tabIndex={-1}>
      <PageTitle>{t('signIn.title')}</PageTitle>
      {error ? (
        <>
          <Notice tone="warning">{t('signIn.providerFailed')}</Notice>
          <ErrorMessage error={error} />
          <div class="actions">
            <a href="/">{t('signIn.restart')}</a>
          </div>
        </>
      ) : (
        <p aria-live="polite">{t('signIn.providerReturning')}</p>
      )}
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
