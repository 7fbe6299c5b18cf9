// Step-up (docs/AUTH.md, "Step-up"): when a sensitive change answers 403 step_up_required, the
// client (api/client.ts) asks this dialog for a fresh proof: a code of the authenticator app (or a
// recovery code), or the password for a person without a second factor, as the refusal's
// `step_up_methods` say. Once POST /sessions/current/step-up accepts it, the change is retried;
// cancelling leaves it refused. Mounted once, in the signed-in shell.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, call, setStepUpPrompt, type StepUpMethod } from './api/client.js';
import { useI18n } from './i18n.js';
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

function StepUpForm({ methods, onDone }: { methods: StepUpMethod[]; onDone: (proved: boolean) => void }) {
  const { t } = useI18n();
  const byPassword = !methods.includes('totp') && !methods.includes('recovery_code');
  const [useRecovery, setUseRecovery] = useState(!methods.includes('totp') && methods.includes('recovery_code'));
  const [value, setValue] = useState('');
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);

  const { busy, error, submit } = useSubmit(async () => {
    const body = byPassword ? { password: value } : useRecovery ? { recovery_code: value.trim() } : { totp_code: value.replace(/\s/g, '') };
    await call(() => api.POST('/sessions/current/step-up', { body }));
    onDone(true);
  });
  const onInput = (e: InputEvent) => setValue((e.currentTarget as HTMLInputElement).value);

  return (
    <dialog ref={dialog} aria-labelledby="step-up-title" onCancel={(e) => (e.preventDefault(), onDone(false))}>
      <h2 id="step-up-title">{t('stepUp.title')}</h2>
      <p>{t(byPassword ? 'stepUp.passwordHint' : useRecovery ? 'stepUp.recoveryHint' : 'stepUp.totpHint')}</p>
      <form onSubmit={submit} aria-busy={busy}>
        {byPassword ? (
          <Field key="password" label={t('stepUp.password')} id="step-up-password" name="password" type="password" autoComplete="current-password" required value={value} onInput={onInput} />
        ) : useRecovery ? (
          <Field key="recovery" label={t('stepUp.recoveryCode')} id="step-up-recovery" name="recovery-code" autoComplete="off" required maxLength={32} value={value} onInput={onInput} />
        ) : (
          <Field key="totp" label={t('stepUp.totpCode')} id="step-up-totp" name="totp-code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]{6,7}" required value={value} onInput={onInput} />
        )}
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {t('stepUp.confirm')}
          </button>
          <button type="button" class="secondary" onClick={() => onDone(false)}>
            {t('common.cancel')}
          </button>
          {methods.includes('totp') && methods.includes('recovery_code') && (
            <button type="button" class="link" onClick={() => (setUseRecovery(!useRecovery), setValue(''))}>
              {t(useRecovery ? 'stepUp.useTotp' : 'stepUp.useRecovery')}
            </button>
          )}
        </div>
      </form>
    </dialog>
  );
}
