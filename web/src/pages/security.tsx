// My second factors: enrol an authenticator app (QR code of the otpauth:// URI, or its key typed
// by hand), confirm it with a first code, keep the recovery codes (copy, download), make new ones,
// remove the app; add passkeys (the browser makes them: web/src/passkeys.ts), name, rename and
// remove them. Also the page a person lands on when a role of theirs requires a second factor
// (`required`): nothing else works until they enrol, and `onEnrolled` then opens the back office.
import type { PageProps } from '../page-entry.js';
import { useEffect, useState } from 'preact/hooks';
import QRCode from 'qrcode';
import { api, call } from '../api/client.js';
import { useI18n } from '../i18n.js';
import { useLoad, useSubmit } from '../load.js';
import { ErrorMessage, Field, Loading, Notice, PageTitle, useRevealed } from '../ui.js';
import { createPasskey } from '../passkeys.js';
import { downloadPersonalData } from '../download.js';
import type { components } from '../../../generated/openapi.js';

type Passkey = components['schemas']['Passkey'];

type Enrolment = { secret: string; otpauth_uri: string };

export function SecurityPage({ required = false, onEnrolled }: { required?: boolean; onEnrolled?: () => void } = {}) {
  const { t, formatDate } = useI18n();
  const factors = useLoad(() => call(() => api.GET('/me/second-factors')), []);
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [error, setError] = useState<unknown>(null);

  const start = async () => {
    setError(null);
    try {
      setEnrolment(await call(() => api.POST('/me/totp')));
    } catch (err) {
      setError(err);
    }
  };
  const remove = async () => {
    if (!window.confirm(t('security.removeConfirm'))) return;
    setError(null);
    try {
      await call(() => api.DELETE('/me/totp'));
      setCodes(null);
      factors.reload();
    } catch (err) {
      setError(err);
    }
  };
  const regenerate = async () => {
    if (!window.confirm(t('security.regenerateConfirm'))) return;
    setError(null);
    try {
      setCodes((await call(() => api.POST('/me/recovery-codes'))).recovery_codes);
      factors.reload();
    } catch (err) {
      setError(err);
    }
  };

  const data = factors.data;
  return (
    <>
      <PageTitle>{t('security.title')}</PageTitle>
      {required && (codes ? <Notice tone="success">{t('security.enrolledNotice')}</Notice> : <Notice tone="warning">{t('security.requiredNotice')}</Notice>)}
      <ErrorMessage error={error} />
      {codes && codes.length > 0 && <RecoveryCodes codes={codes} onDone={() => (setCodes(null), onEnrolled?.())} />}
      {factors.error ? (
        <ErrorMessage error={factors.error} onRetry={factors.reload} />
      ) : !data ? (
        <Loading />
      ) : (
        <section aria-labelledby="totp-title">
          <h2 id="totp-title">{t('security.totpTitle')}</h2>
          {data.totp ? (
            <>
              <p>{t('security.totpEnrolled', { date: formatDate(data.totp.enrolled_at) })}</p>
              <p>{data.totp.last_used_at ? t('security.totpLastUsed', { date: formatDate(data.totp.last_used_at) }) : t('security.totpNeverUsed')}</p>
              <p>{t('security.codesRemaining', { count: String(data.recovery_codes_remaining) })}</p>
              {data.code_failures.locked_until ? (
                <Notice tone="warning">{t('security.codesLocked', { date: formatDate(data.code_failures.locked_until) })}</Notice>
              ) : data.code_failures.in_last_day > 0 ? (
                <p>{t('security.codeFailures', { count: String(data.code_failures.in_last_day), limit: String(data.code_failures.limit) })}</p>
              ) : null}
              <div class="actions">
                <button type="button" class="secondary" onClick={regenerate}>
                  {t('security.regenerate')}
                </button>
                <button type="button" class="danger" onClick={remove}>
                  {t('security.remove')}
                </button>
              </div>
            </>
          ) : enrolment ? (
            <EnrolTotp
              enrolment={enrolment}
              onConfirmed={(recoveryCodes) => {
                setEnrolment(null);
                factors.reload();
                if (recoveryCodes.length > 0) setCodes(recoveryCodes);
                else onEnrolled?.();
              }}
            />
          ) : (
            <>
              <p>{t('security.totpNone')}</p>
              <button type="button" onClick={start}>
                {t('security.totpStart')}
              </button>
            </>
          )}
        </section>
      )}
      <Passkeys
        onRegistered={(recoveryCodes) => {
          factors.reload();
          if (recoveryCodes.length > 0) setCodes(recoveryCodes);
          else onEnrolled?.();
        }}
        onRemoved={() => factors.reload()}
      />
      {!required && <MyData />}
      {!required && <SecurityNotices />}
    </>
  );
}

/** My data: everything the service holds about me, as a JSON file (GDPR articles 15 and 20; docs/PRIVACY.md). */
function MyData() {
  const { t } = useI18n();
  const [done, setDone] = useState(false);
  const download = useSubmit(async () => {
    setDone(false);
    await downloadPersonalData();
    setDone(true);
  });
  return (
    <section aria-labelledby="my-data-title">
      <h2 id="my-data-title">{t('security.myDataTitle')}</h2>
      <p>{t('security.myDataHint')}</p>
      {done && <Notice tone="success">{t('security.myDataDone')}</Notice>}
      <ErrorMessage error={download.error} />
      <button type="button" class="secondary" disabled={download.busy} onClick={download.submit}>
        {download.busy ? t('security.myDataBusy') : t('security.myDataDownload')}
      </button>
    </section>
  );
}

/** The security notices sent to me by e-mail (GET /me/notices), newest first: readable here as well. */
function SecurityNotices() {
  const { t, formatDate } = useI18n();
  const list = useLoad(() => call(() => api.GET('/me/notices')), []);
  return (
    <section aria-labelledby="notices-title">
      <h2 id="notices-title">{t('security.noticesTitle')}</h2>
      <p>{t('security.noticesIntro')}</p>
      {list.error ? (
        <ErrorMessage error={list.error} onRetry={list.reload} />
      ) : !list.data ? (
        <Loading />
      ) : list.data.data.length === 0 ? (
        <p>{t('security.noticesNone')}</p>
      ) : (
        <ul class="notices">
          {list.data.data.map((notice) => (
            <li key={notice.id} lang={notice.language}>
              <strong>{notice.subject}</strong> · <time dateTime={notice.created_at}>{formatDate(notice.created_at)}</time>
              <p class="message-body">{notice.text}</p>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** My passkeys: add one (named), rename, remove. */
function Passkeys({ onRegistered, onRemoved }: { onRegistered: (codes: string[]) => void; onRemoved: () => void }) {
  const { t, formatDate } = useI18n();
  const list = useLoad(() => call(() => api.GET('/me/passkeys')), []);
  const [name, setName] = useState('');
  const [renaming, setRenaming] = useState<Passkey | null>(null);
  const [error, setError] = useState<unknown>(null);

  const add = useSubmit(async () => {
    setError(null);
    const { options } = await call(() => api.POST('/me/passkeys/registration'));
    const credential = await createPasskey(options);
    const answer = await call(() => api.POST('/me/passkeys', { body: { name: name.trim(), credential } }));
    setName('');
    list.reload();
    onRegistered(answer.recovery_codes);
  });
  const remove = async (passkey: Passkey) => {
    if (!window.confirm(t('security.passkeyRemoveConfirm', { name: passkey.name }))) return;
    setError(null);
    try {
      await call(() => api.DELETE('/me/passkeys/{id}', { params: { path: { id: passkey.id } } }));
      list.reload();
      onRemoved();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">{t('security.passkeysTitle')}</h2>
      <p>{t('security.passkeysIntro')}</p>
      <ErrorMessage error={error} />
      {list.error ? (
        <ErrorMessage error={list.error} onRetry={list.reload} />
      ) : !list.data ? (
        <Loading />
      ) : list.data.data.length === 0 ? (
        <p>{t('security.passkeysNone')}</p>
      ) : (
        <ul class="passkeys" aria-label={t('security.passkeysTitle')}>
          {list.data.data.map((passkey) => (
            <li key={passkey.id}>
              {renaming?.id === passkey.id ? (
                <RenamePasskey passkey={passkey} onDone={() => (setRenaming(null), list.reload())} />
              ) : (
                <>
                  <strong>{passkey.name}</strong> {passkey.backed_up && <span class="badge ok">{t('security.passkeySynced')}</span>}
                  <div>
                    {t('security.passkeyAdded', { date: formatDate(passkey.created_at) })}{' '}
                    {passkey.last_used_at ? t('security.passkeyLastUsed', { date: formatDate(passkey.last_used_at) }) : t('security.passkeyNeverUsed')}
                  </div>
                  <div class="actions">
                    <button type="button" class="secondary" aria-label={t('security.passkeyRenameLabel', { name: passkey.name })} onClick={() => setRenaming(passkey)}>
                      {t('security.passkeyRename')}
                    </button>
                    <button type="button" class="danger" aria-label={t('security.passkeyRemoveLabel', { name: passkey.name })} onClick={() => remove(passkey)}>
                      {t('security.passkeyRemove')}
                    </button>
                  </div>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={add.submit} class="narrow" aria-busy={add.busy}>
        <Field label={t('security.passkeyName')} id="passkey-name" hint={t('security.passkeyNameHint')} required maxLength={64} value={name} onInput={(e: InputEvent) => setName((e.currentTarget as HTMLInputElement).value)} />
        <ErrorMessage error={add.error} />
        <button type="submit" disabled={add.busy}>
          {add.busy ? t('common.saving') : t('security.passkeyAdd')}
        </button>
      </form>
    </section>
  );
}

function RenamePasskey({ passkey, onDone }: { passkey: Passkey; onDone: () => void }) {
  const { t } = useI18n();
  const [name, setName] = useState(passkey.name);
  const { busy, error, submit } = useSubmit(async () => {
    await call(() => api.PATCH('/me/passkeys/{id}', { params: { path: { id: passkey.id } }, body: { name: name.trim() } }));
    onDone();
  });
  return (
    <form onSubmit={submit} class="narrow" aria-busy={busy}>
      <Field label={t('security.passkeyNewName', { name: passkey.name })} id={`passkey-rename-${passkey.id}`} required maxLength={64} value={name} onInput={(e: InputEvent) => setName((e.currentTarget as HTMLInputElement).value)} />
      <ErrorMessage error={error} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? t('common.saving') : t('security.passkeySave')}
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}

function EnrolTotp({ enrolment, onConfirmed }: { enrolment: Enrolment; onConfirmed: (codes: string[]) => void }) {
  const { t } = useI18n();
  const [qr, setQr] = useState<string | null>(null);
  const [code, setCode] = useState('');
  useEffect(() => {
    QRCode.toDataURL(enrolment.otpauth_uri, { margin: 1, width: 200 }).then(setQr, () => setQr(null));
  }, [enrolment.otpauth_uri]);

  const { busy, error, submit } = useSubmit(async () => {
    const answer = await call(() => api.POST('/me/totp/confirm', { body: { totp_code: code.replace(/\s/g, '') } }));
    onConfirmed(answer.recovery_codes);
  });

  return (
    <>
      <p>{t('security.scan')}</p>
      {qr && <img class="qr" src={qr} width={200} height={200} alt={t('security.qrAlt')} />}
      <p>
        {t('security.typeKey')} <code class="secret" data-testid="totp-secret">{enrolment.secret}</code>
      </p>
      <form onSubmit={submit} class="narrow" aria-busy={busy}>
        <Field label={t('security.confirmCode')} id="totp-confirm-code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]{6,7}" required value={code} onInput={(e: InputEvent) => setCode((e.currentTarget as HTMLInputElement).value)} />
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          {busy ? t('common.saving') : t('security.confirm')}
        </button>
      </form>
    </>
  );
}

/** The recovery codes, once: the server keeps only their digests. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  const ref = useRevealed<HTMLElement>(codes);
  const text = `${codes.join('\n')}\n`;
  const copy = async () => {
    await navigator.clipboard.writeText(text);
    setCopied(true);
  };
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = 'recovery-codes.txt';
    link.click();
    URL.revokeObjectURL(url);
  };
  return (
    <section class="message success once" aria-labelledby="codes-title" tabIndex={-1} ref={ref} data-testid="recovery-codes-panel">
      <h2 id="codes-title">{t('security.codesTitle')}</h2>
      <p>
        <strong>{t('security.codesOnce')}</strong>
      </p>
      <ul class="recovery-codes" data-testid="recovery-codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div class="actions">
        <button type="button" onClick={copy}>
          {t('common.copy')}
        </button>
        <button type="button" class="secondary" onClick={download}>
          {t('security.download')}
        </button>
        <span role="status">{copied ? t('common.copied') : ''}</span>
        <button type="button" class="secondary" onClick={onDone}>
          {t('security.codesDone')}
        </button>
      </div>
    </section>
  );
}

/** The page as the navigation opens it (its entry: security.entry.ts). */
export const Route = (_: PageProps) => <SecurityPage />;
