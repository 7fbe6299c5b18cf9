// Invitations (docs/INVITATIONS.md): the list with resend and revoke, the form that invites someone
// by e-mail with roles, and the page the message's link opens (#/invitation?token=...), where the
// person chooses their name and password and is signed in.
import type { PageProps } from '../page-entry.js';
import { useState } from 'preact/hooks';
import type { components } from '../../../generated/openapi.js';
import { api, call, tokens } from '../api/client.js';
import { useI18n } from '../i18n.js';
import { useLoad, useSubmit } from '../load.js';
import { ErrorMessage, Field, ListState, Notice, PageTitle, Pager, TableScroll, useCursorPages } from '../ui.js';
import { DevMailboxLink } from './password-reset.js';

type Invitation = components['schemas']['Invitation'];
const PAGE_SIZE = 20;

export function InvitationsPage() {
  const { t } = useI18n();
  const pages = useCursorPages();
  const list = useLoad(() => call(() => api.GET('/invitations', { params: { query: { limit: PAGE_SIZE, ...(pages.cursor ? { cursor: pages.cursor } : {}) } } })), [pages.cursor]);
  const [notice, setNotice] = useState<string | null>(null);
  const [email, setEmail] = useState('');
  const [roles, setRoles] = useState('');
  const [days, setDays] = useState('7');
  const [language, setLanguage] = useState<'en' | 'fr'>('en');

  const invite = useSubmit(async () => {
    const names = roles.split(',').map((r) => r.trim()).filter(Boolean);
    const made = await call(() => api.POST('/invitations', { body: { email, roles: names, expires_in_days: Number(days), language } }));
    setNotice(t('invitations.sent', { email: made.email }));
    setEmail('');
    setRoles('');
    pages.restart();
    list.reload();
  });
  const [actionError, setActionError] = useState<unknown>(null);
  const act = async (run: () => Promise<string>) => {
    setActionError(null);
    try {
      setNotice(await run());
      list.reload();
    } catch (error) {
      setActionError(error);
    }
  };
  const resend = (invitation: Invitation) =>
    act(async () => {
      await call(() => api.POST('/invitations/{id}/resend', { params: { path: { id: invitation.id } } }));
      return t('invitations.resent', { email: invitation.email });
    });
  const revoke = (invitation: Invitation) =>
    act(async () => {
      await call(() => api.DELETE('/invitations/{id}', { params: { path: { id: invitation.id } } }));
      return t('invitations.revoked', { email: invitation.email });
    });

  return (
    <>
      <PageTitle>{t('invitations.title')}</PageTitle>
      <p>{t('invitations.intro')}</p>
      <DevMailboxLink />
      {notice && <Notice tone="success">{notice}</Notice>}
      <section aria-labelledby="invite-heading">
        <h2 id="invite-heading">{t('invitations.new')}</h2>
        <form onSubmit={invite.submit} aria-busy={invite.busy}>
          <Field label={t('invitations.email')} id="invite-email" type="email" required value={email} onInput={(e: InputEvent) => setEmail((e.currentTarget as HTMLInputElement).value)} />
          <Field label={t('invitations.roles')} id="invite-roles" hint={t('invitations.rolesHint')} value={roles} onInput={(e: InputEvent) => setRoles((e.currentTarget as HTMLInputElement).value)} />
          <Field label={t('invitations.days')} id="invite-days" type="number" min={1} max={30} required value={days} onInput={(e: InputEvent) => setDays((e.currentTarget as HTMLInputElement).value)} />
          <div class="field">
            <label for="invite-language">{t('invitations.language')}</label>
            <select id="invite-language" value={language} onChange={(e) => setLanguage((e.currentTarget as HTMLSelectElement).value as 'en' | 'fr')}>
              <option value="en" lang="en">English</option>
              <option value="fr" lang="fr">Français</option>
            </select>
          </div>
          <ErrorMessage error={invite.error} />
          <button type="submit" disabled={invite.busy}>
            {invite.busy ? t('invitations.sending') : t('invitations.send')}
          </button>
        </form>
      </section>
      <ErrorMessage error={actionError} />
      <ListState loaded={list} empty={t('invitations.empty')}>
        {(items: Invitation[]) => (
          <TableScroll>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('invitations.email')}</th>
                  <th scope="col">{t('invitations.roles')}</th>
                  <th scope="col">{t('invitations.status')}</th>
                  <th scope="col">{t('invitations.expires')}</th>
                  <th scope="col">{t('invitations.by')}</th>
                  <th scope="col">
                    <span class="visually-hidden">{t('common.actions')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((invitation) => (
                  <tr key={invitation.id}>
                    <td>{invitation.email}</td>
                    <td>{invitation.roles.join(', ') || t('common.none')}</td>
                    <td>{t(`invitations.status.${invitation.status}`)}</td>
                    <td>{new Date(invitation.expires_at).toLocaleString()}</td>
                    <td>{invitation.created_by.label}</td>
                    <td>
                      {(invitation.status === 'pending' || invitation.status === 'expired') && (
                        <button type="button" class="secondary" onClick={() => void resend(invitation)} aria-label={`${t('invitations.resend')} ${invitation.email}`}>
                          {t('invitations.resend')}
                        </button>
                      )}
                      {invitation.status === 'pending' && (
                        <button type="button" class="secondary" onClick={() => void revoke(invitation)} aria-label={`${t('invitations.revoke')} ${invitation.email}`}>
                          {t('invitations.revoke')}
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
      <Pager label={t('invitations.pages')} previous={pages.previous} next={pages.next(list.data?.next_cursor)} number={pages.number} loading={list.loading} />
    </>
  );
}

/** The token of the link (`#/invitation?token=...`), or null. */
export function invitationToken(): string | null {
  const query = window.location.hash.split('?')[1] ?? '';
  return new URLSearchParams(query).get('token');
}

/** What the message's link opens, signed out: the person chooses their name and password, and is signed in. */
export function AcceptInvitationPage({ onSignedIn }: { onSignedIn: () => void }) {
  const { t } = useI18n();
  const token = invitationToken();
  const [firstName, setFirstName] = useState('');
  const [lastName, setLastName] = useState('');
  const [password, setPassword] = useState('');
  const accept = useSubmit(async () => {
    if (!token) return;
    tokens.accept(await call(() => api.POST('/invitations/accept', { body: { token, first_name: firstName, last_name: lastName, password } })));
    onSignedIn();
  });
  return (
    <main id="main" class="sign-in" tabIndex={-1}>
      <PageTitle>{t('invitations.accept.title')}</PageTitle>
      {!token ? (
        <Notice tone="warning">{t('invitations.accept.noToken')}</Notice>
      ) : (
        <form onSubmit={accept.submit} aria-busy={accept.busy}>
          <p>{t('invitations.accept.intro')}</p>
          <Field label={t('invitations.accept.firstName')} id="first-name" autoComplete="given-name" required value={firstName} onInput={(e: InputEvent) => setFirstName((e.currentTarget as HTMLInputElement).value)} />
          <Field label={t('invitations.accept.lastName')} id="last-name" autoComplete="family-name" required value={lastName} onInput={(e: InputEvent) => setLastName((e.currentTarget as HTMLInputElement).value)} />
          <Field label={t('invitations.accept.password')} id="new-password" type="password" autoComplete="new-password" minLength={12} required value={password} onInput={(e: InputEvent) => setPassword((e.currentTarget as HTMLInputElement).value)} />
          <ErrorMessage error={accept.error} />
          <button type="submit" disabled={accept.busy}>
            {t('invitations.accept.submit')}
          </button>
        </form>
      )}
    </main>
  );
}

/** The page as the navigation opens it (its entry: invitations.entry.ts). */
export const Route = (_: PageProps) => <InvitationsPage />;
