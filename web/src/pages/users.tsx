// Users: one page of GET /users at a time, followed by its cursor.
import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api/client.js';
import type { components } from '../../../generated/openapi.js';
import { useI18n } from '../i18n.js';
import { Empty, ErrorMessage, Loading, PageTitle } from '../ui.js';

type UserPage = components['schemas']['UserPage'];

export function UsersPage() {
  const { t, formatDate } = useI18n();
  const [page, setPage] = useState<UserPage | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let current = true;
    setPage(null);
    setError(null);
    call(() => api.GET('/users'))
      .then((result) => current && setPage(result))
      .catch((err: unknown) => current && setError(err));
    return () => {
      current = false;
    };
  }, [attempt]);

  return (
    <>
      <PageTitle>{t('users.title')}</PageTitle>
      {error ? (
        <ErrorMessage error={error} onRetry={() => setAttempt((n) => n + 1)} />
      ) : !page ? (
        <Loading />
      ) : page.data.length === 0 ? (
        <Empty>{t('users.empty')}</Empty>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">{t('users.email')}</th>
              <th scope="col">{t('users.name')}</th>
              <th scope="col">{t('users.status')}</th>
              <th scope="col">{t('users.roles')}</th>
              <th scope="col">{t('users.lastSignIn')}</th>
            </tr>
          </thead>
          <tbody>
            {page.data.map((user) => (
              <tr key={user.id}>
                <td>{user.email}</td>
                <td>
                  {user.first_name} {user.last_name}
                </td>
                <td>{t(`users.status.${user.status}`)}</td>
                <td>{user.roles.join(', ') || t('common.none')}</td>
                <td>{formatDate(user.last_sign_in_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
