// Step-up (docs/AUTH.md, "Step-up"): when a sensitive change answers 403 step_up_required, the
// client (api/client.ts) asks this dialog for a fresh proof: a passkey, a code of the authenticator
// app (or a recovery code), or the password for a person without a second factor, as the refusal's
// `step_up_methods` say. Once POST /sessions/current/step-up accepts it, the change is retried;
// cancelling leaves it refused. Mounted once, in the signed-in shell.
//
// A person who signs in only through their company's identity provider (`oidc` in the methods,
// docs/IDENTITY.md "Step-up at the provider") logs in there again: the browser leaves for the
// provider (POST /sessions/current/step-up/oidc) and comes back to the redirect URI, /sign-in/oidc,
// where StepUpReturn finishes at POST /sessions/current/step-up/oidc/callback with the flow token
// kept in this tab's sessionStorage (a key of its own: a sign-in's return never takes it), then
// goes back to the page the change was asked on. The change is not retried by itself (the page
// that asked for it is gone with the navigation): the dialog says the proof holds for 5 minutes and
// the person makes it again. A full-page redirect rather than a popup: the shell's
// Cross-Origin-Opener-Policy (helmet's same-origin) cuts a popup from its opener once it visits
// the provider, and popups are blocked in places.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, call, setStepUpPrompt, type StepUpMethod } from './api/client.js';
import { useI18n, type MessageKey } from './i18n.js';
import { usePasskey } from './passkeys.js';
import { useSubmit } from './load.js';
import { ErrorMessage, Field } from './ui.js';

/** The step-up flow at the provider, kept in this tab across the visit there. */
const OIDC_STEP_UP_KEY = 'backoffice.oidcStepUp';
/** Where the provider sends the browser back (the path of OIDC_REDIRECT_URI), as for a sign-in. */
const RETURN_PATH = '/sign-in/oidc';

interface Pending {
  methods: StepUpMethod[];
  done: (proved: boolean) => void;
}

export function StepUpDialog() {
  const [pending, setPending] = useState<Pending | null>(null);
  useEffect(() => {
    setStepUpPrompt((methods) => new Promise<boolean>((resolve) => setPending({ methods, done: resolve })));
    return () => setStepUpPrompt(undefined);
  }, []);
  if (!pending) return null;
  const finish = (proved: boolean) => {
    pending.done(proved);
    setPending(null);
  };
  return <StepUpForm methods={pending.methods} onDone={finish} />;
}

type Factor = 'passkey' | 'totp' | 'recovery_code';
type Method = Factor | 'password' | 'oidc';

function StepUpForm({ methods, onDone }: { methods: StepUpMethod[]; onDone: (proved: boolean) => void }) {
  const { t } = useI18n();
  // As at sign-in: a passkey first, then the app, then a recovery code; for a person with none, the
  // password, then the identity provider (the only one for a person without a password here).
  const offered = (['passkey', 'totp', 'recovery_code', 'password', 'oidc'] as const).filter((m) => methods.includes(m));
  const [method, setMethod] = useState<Method>(offered[0] ?? 'password');
  const [value, setValue] = useState('');
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);

  const { busy, error, submit } = useSubmit(async () => {
    if (method === 'oidc') {
      const started = await call(() => api.POST('/sessions/current/step-up/oidc'));
      window.sessionStorage.setItem(OIDC_STEP_UP_KEY, JSON.stringify({ flowToken: started.flow_token, back: window.location.hash }));
      window.location.assign(started.authorization_url);
      return;
    }
    let body;
    if (method === 'passkey') {
      // The options' challenge is bound to this session and good once (POST /sessions/current/step-up/passkey).
      const { options } = await call(() => api.POST('/sessions/current/step-up/passkey'));
      body = { passkey: await usePasskey(options) };
    } else body = method === 'password' ? { password: value } : method === 'recovery_code' ? { recovery_code: value.trim() } : { totp_code: value.replace(/\s/g, '') };
    await call(() => api.POST('/sessions/current/step-up', { body }));
    onDone(true);
  });
  const onInput = (e: InputEvent) => setValue((e.currentTarget as HTMLInputElement).value);
  // No proof this session can give (a password its company retired, no link to its provider): say
  // where one is to be had, rather than ask for something the API would refuse.
  if (offered.length === 0) {
    return (
      <dialog ref={dialog} aria-labelledby="step-up-title" onCancel={(e) => (e.preventDefault(), onDone(false))}>
        <h2 id="step-up-title">{t('stepUp.title')}</h2>
        <p>{t('stepUp.noneHint')}</p>
        <div class="actions">
          <button type="button" class="secondary" onClick={() => onDone(false)}>
            {t('common.close')}
          </button>
        </div>
      </dialog>
    );
  }
  const hints: Record<Method, MessageKey> = { passkey: 'stepUp.passkeyHint', totp: 'stepUp.totpHint', recovery_code: 'stepUp.recoveryHint', password: 'stepUp.passwordHint', oidc: 'stepUp.oidcHint' };
  const switches: Record<Method, MessageKey> = { passkey: 'stepUp.usePasskey', totp: 'stepUp.useTotp', recovery_code: 'stepUp.useRecovery', password: 'stepUp.usePassword', oidc: 'stepUp.useOidc' };
  const submits: Partial<Record<Method, MessageKey>> = { passkey: 'stepUp.confirmPasskey', oidc: 'stepUp.continueAtProvider' };

  return (
    <dialog ref={dialog} aria-labelledby="step-up-title" onCancel={(e) => (e.preventDefault(), onDone(false))}>
      <h2 id="step-up-title">{t('stepUp.title')}</h2>
      <p>{t(hints[method])}</p>
      <form onSubmit={submit} aria-busy={busy}>
        {method === 'password' ? (
          <Field key="password" label={t('stepUp.password')} id="step-up-password" name="password" type="password" autoComplete="current-password" required value={value} onInput={onInput} />
        ) : method === 'recovery_code' ? (
          <Field key="recovery" label={t('stepUp.recoveryCode')} id="step-up-recovery" name="recovery-code" autoComplete="off" required maxLength={32} value={value} onInput={onInput} />
        ) : method === 'totp' ? (
          <Field key="totp" label={t('stepUp.totpCode')} id="step-up-totp" name="totp-code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]{6,7}" required value={value} onInput={onInput} />
        ) : null}
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {t(submits[method] ?? 'stepUp.confirm')}
          </button>
          <button type="button" class="secondary" onClick={() => onDone(false)}>
            {t('common.cancel')}
          </button>
          {offered
            .filter((m) => m !== method)
            .map((m) => (
              <button key={m} type="button" class="link" onClick={() => (setMethod(m), setValue(''))}>
                {t(switches[m])}
              </button>
            ))}
        </div>
      </form>
    </dialog>
  );
}

/**
 * Back from the identity provider at /sign-in/oidc with a step-up flow of this tab: its code, state
 * and issuer, with the flow token, to the step-up's callback; then the page the change was asked on,
 * and a word saying whether it worked. Renders nothing otherwise. Mounted once, in the signed-in shell.
 */
export function StepUpReturn() {
  const { t } = useI18n();
  const [outcome, setOutcome] = useState<{ error: unknown } | 'returning' | 'done' | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const kept = window.sessionStorage.getItem(OIDC_STEP_UP_KEY);
    if (window.location.pathname !== RETURN_PATH || !kept) return;
    window.sessionStorage.removeItem(OIDC_STEP_UP_KEY);
    const { flowToken, back } = JSON.parse(kept) as { flowToken: string; back: string };
    const query = new URLSearchParams(window.location.search);
    const [code, state, iss] = [query.get('code'), query.get('state'), query.get('iss')];
    // The address becomes the page's again (a reload must not send the code twice).
    window.history.replaceState(null, '', '/');
    window.location.hash = back;
    setOutcome('returning');
    if (!code || !state) {
      setOutcome({ error: new Error(query.get('error_description') ?? query.get('error') ?? t('stepUp.oidcFailed')) });
      return;
    }
    call(() => api.POST('/sessions/current/step-up/oidc/callback', { body: { code, state, flow_token: flowToken, ...(iss ? { iss } : {}) } }))
      .then(() => setOutcome('done'))
      .catch((error: unknown) => setOutcome({ error }));
  }, []);
  useEffect(() => {
    if (outcome && !dialog.current?.open) dialog.current?.showModal();
  }, [outcome]);
  if (!outcome) return null;
  return (
    <dialog ref={dialog} aria-labelledby="step-up-return-title" onCancel={() => setOutcome(null)}>
      <h2 id="step-up-return-title">{t('stepUp.title')}</h2>
      {outcome === 'returning' ? (
        <p aria-live="polite">{t('stepUp.oidcReturning')}</p>
      ) : outcome === 'done' ? (
        <p role="status">{t('stepUp.oidcDone')}</p>
      ) : (
        <>
          <p>{t('stepUp.oidcFailed')}</p>
          <ErrorMessage error={outcome.error} />
        </>
      )}
      <div class="actions">
        <button type="button" disabled={outcome === 'returning'} onClick={() => setOutcome(null)}>
          {t('common.close')}
        </button>
      </div>
    </dialog>
  );
}
