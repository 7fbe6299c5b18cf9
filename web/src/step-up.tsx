// Step-up (docs/AUTH.md, "Step-up"): when a sensitive change answers 403 step_up_required, the
// client (api/client.ts) asks this dialog for a fresh proof: a passkey, a code of the authenticator
// app (or a recovery code), or the password for a person without a second factor, as the refusal's
// `step_up_methods` say. Once POST /sessions/current/step-up accepts it, the change is retried;
// cancelling leaves it refused. Mounted once, in the signed-in shell.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, call, setStepUpPrompt, type StepUpMethod } from './api/client.js';
import { useI18n, type MessageKey } from './i18n.js';
import { usePasskey } from './passkeys.js';
import { useSubmit } from './load.js';
import { ErrorMessage, Field } from './ui.js';

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

function StepUpForm({ methods, onDone }: { methods: StepUpMethod[]; onDone: (proved: boolean) => void }) {
  const { t } = useI18n();
  // As at sign-in: a passkey first, then the app, then a recovery code; the password only for a person with none.
  const offered = (['passkey', 'totp', 'recovery_code'] as const).filter((m) => methods.includes(m));
  const [method, setMethod] = useState<Factor | 'password'>(offered[0] ?? 'password');
  const [value, setValue] = useState('');
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);

  const { busy, error, submit } = useSubmit(async () => {
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
  const hints: Record<Factor | 'password', MessageKey> = { passkey: 'stepUp.passkeyHint', totp: 'stepUp.totpHint', recovery_code: 'stepUp.recoveryHint', password: 'stepUp.passwordHint' };
  const switches: Record<Factor, MessageKey> = { passkey: 'stepUp.usePasskey', totp: 'stepUp.useTotp', recovery_code: 'stepUp.useRecovery' };

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
            {t(method === 'passkey' ? 'stepUp.confirmPasskey' : 'stepUp.confirm')}
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
