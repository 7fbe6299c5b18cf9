// Change my password: PUT /me/password. The server signs the other sessions out. Also the page a
// person lands on when their password was set by someone else (`required`): nothing else works
// until they choose their own, and `onChanged` then opens the back office.
import type { PageProps } from '../page-entry.js';
import { useState } from 'preact/hooks';
import { api, call } from '../api/client.js';
import { useI18n } from '../i18n.js';
import { ErrorMessage, Field, Notice, PageTitle } from '../ui.js';
import { useSubmit } from '../load.js';

export function PasswordPage({ required = false, onChanged }: { required?: boolean; onChanged?: () => void } = {}) {
  const { t } = useI18n();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [done, setDone] = useState(false);
  const mismatch = confirm !== '' && confirm !== next;

  const { busy, error, submit } = useSubmit(async () => {
    if (mismatch) return;
    setDone(false);
    await call(() => api.PUT('/me/password', { body: { current_password: current, new_password: next } }));
    setDone(true);
    setCurrent('');
    setNext('');
    setConfirm('');
    onChanged?.();
  });

  const value = (set: (v: string) => void) => (e: InputEvent) => set((e.currentTarget as HTMLInputElement).value);
  return (
    <>
      <PageTitle>{t(required ? 'password.requiredTitle' : 'password.title')}</PageTitle>
      {required && <Notice tone="warning">{t('password.requiredNotice')}</Notice>}
      {done && <Notice tone="success">{t('password.done')}</Notice>}
      <form onSubmit={submit} class="narrow">
        <Field label={t('password.current')} id="current-password" type="password" autoComplete="current-password" required value={current} onInput={value(setCurrent)} />
        <Field label={t('password.new')} id="new-password" type="password" autoComplete="new-password" required minLength={12} maxLength={128} hint={t('password.policy')} value={next} onInput={value(setNext)} />
        <Field label={t('password.confirm')} id="confirm-password" type="password" autoComplete="new-password" required value={confirm} onInput={value(setConfirm)} aria-invalid={mismatch} />
        {mismatch && (
          <p class="message error" role="alert">
            {t('password.mismatch')}
          </p>
        )}
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy || mismatch}>
          {busy ? t('common.saving') : t('password.submit')}
        </button>
      </form>
    </>
  );
}

/** The page as the navigation opens it (its entry: password.entry.ts). */
export const Route = (_: PageProps) => <PasswordPage />;
