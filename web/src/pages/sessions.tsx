// My sessions: device, IP, when; the current one marked; revoke one, sign out everywhere else, sign out.
import type { PageProps } from '../page-entry.js';
import { useState } from 'preact/hooks';
import { api, call, signOut } from '../api/client.js';
import type { components } from '../../../generated/openapi.js';
import { useI18n } from '../i18n.js';
import { useLoad } from '../load.js';
import { ErrorMessage, ListState, Notice, PageTitle, TableScroll } from '../ui.js';

type Session = components['schemas']['Session'];

/** "Chrome on Linux" from a user agent; the raw string stays in the title. */
export function describeDevice(userAgent: string): string {
  const browser = /Edg\//.test(userAgent) ? 'Edge' : /Firefox\//.test(userAgent) ? 'Firefox' : /Chrom(e|ium)\//.test(userAgent) ? 'Chrome' : /Safari\//.test(userAgent) ? 'Safari' : null;
  const system = /Windows/.test(userAgent) ? 'Windows' : /Android/.test(userAgent) ? 'Android' : /iPhone|iPad/.test(userAgent) ? 'iOS' : /Mac OS X/.test(userAgent) ? 'macOS' : /Linux/.test(userAgent) ? 'Linux' : null;
  if (browser && system) return `${browser} · ${system}`;
  return browser ?? system ?? (userAgent.slice(0, 40) || '?');
}

export function SessionsPage() {
  const { t, formatDate } = useI18n();
  const sessions = useLoad(() => call(() => api.GET('/sessions')), []);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);

  const revoke = async (session: Session) => {
    setError(null);
    setDone(null);
    try {
      await call(() => api.DELETE('/sessions/{id}', { params: { path: { id: session.id } } }));
      sessions.reload();
    } catch (err) {
      setError(err);
    }
  };
  const revokeOthers = async () => {
    if (!window.confirm(t('sessions.othersConfirm'))) return;
    setError(null);
    try {
      for (const session of sessions.data?.data.filter((s) => !s.current) ?? []) {
        await call(() => api.DELETE('/sessions/{id}', { params: { path: { id: session.id } } }));
      }
      setDone(t('sessions.othersDone'));
      sessions.reload();
    } catch (err) {
      setError(err);
      sessions.reload();
    }
  };

  const others = sessions.data?.data.filter((s) => !s.current).length ?? 0;
  return (
    <>
      <PageTitle>{t('sessions.title')}</PageTitle>
      <div class="actions">
        <button type="button" class="secondary" onClick={revokeOthers} disabled={others === 0}>
          {t('sessions.signOutOthers')}
        </button>
        <button type="button" class="danger" onClick={() => signOut().catch(setError)}>
          {t('nav.signOut')}
        </button>
      </div>
      {done && <Notice tone="success">{done}</Notice>}
      <ErrorMessage error={error} />
      <ListState loaded={sessions} empty={t('sessions.empty')}>
        {(items) => (
          <TableScroll>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('sessions.device')}</th>
                  <th scope="col">{t('sessions.ip')}</th>
                  <th scope="col">{t('sessions.created')}</th>
                  <th scope="col">{t('sessions.lastUsed')}</th>
                  <th scope="col">{t('sessions.method')}</th>
                  <th scope="col">
                    <span class="visually-hidden">{t('common.actions')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((session) => (
                  <tr key={session.id} aria-current={session.current ? 'true' : undefined}>
                    <td title={session.user_agent}>
                      {describeDevice(session.user_agent)} {session.current && <span class="badge ok">{t('sessions.current')}</span>}
                    </td>
                    <td>{session.ip_address}</td>
                    <td>{formatDate(session.created_at)}</td>
                    <td>{formatDate(session.last_used_at)}</td>
                    <td>{t(`sessions.method.${session.authentication_method}`)}</td>
                    <td>
                      {!session.current && (
                        <button type="button" class="secondary" onClick={() => revoke(session)} aria-label={t('sessions.revokeNamed', { device: describeDevice(session.user_agent), ip: session.ip_address })}>
                          {t('sessions.revoke')}
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </ListState>
    </>
  );
}

/** The page as the navigation opens it (its entry: sessions.entry.ts). */
export const Route = (_: PageProps) => <SessionsPage />;
