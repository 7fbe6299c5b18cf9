// Users: a paged list (cursor) with filters, create, edit names/roles/status, disable, reset the
// second factors of someone who lost theirs (docs/AUTH.md, "A lost phone"). What the
// server would refuse for lack of a right is shown disabled, with why (web/src/authority.ts): a
// role the person may not grant or take away, disabling someone holding more than they do, and an
// operation whose permission (users.create, users.update, users.disable) they lack.
import type { PageProps } from '../page-entry.js';
import { useState } from 'preact/hooks';
import { api, call, callTagged, ifMatch, type Tagged } from '../api/client.js';
import { TaggedEditor, unlessStale, type EditOutcome } from '../tagged-editor.js';
import type { components } from '../../../generated/openapi.js';
import { useI18n } from '../i18n.js';
import { useLoad, useSubmit } from '../load.js';
import { href, navigate } from '../router.js';
import { ErrorMessage, Field, ListState, Notice, PageTitle, Why, lockedFor, toggleLocks, Pager, useCursorPages, TableScroll } from '../ui.js';
import { lacking } from '../authority.js';
import { Check } from '../permission-picker.js';
import { downloadPersonalData } from '../download.js';

type User = components['schemas']['User'];
type Role = components['schemas']['Role'];
type Status = User['status'];
const PAGE_SIZE = 20;

export function UsersPage({ userId, myPermissions }: { userId?: string | undefined; myPermissions: readonly string[] }) {
  if (userId === 'new') return <CreateUser myPermissions={myPermissions} />;
  if (userId) return <EditUser id={userId} myPermissions={myPermissions} />;
  return <UserList myPermissions={myPermissions} />;
}

function UserList({ myPermissions }: { myPermissions: readonly string[] }) {
  const { t, formatDate } = useI18n();
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState<Status | ''>('');
  const [role, setRole] = useState('');
  const [filters, setFilters] = useState<{ search?: string; status?: Status; role?: string }>({});
  // Cursors of the pages seen so far, so "previous" needs no server support.
  const pages = useCursorPages();
  const { cursor } = pages;
  const page = useLoad(() => call(() => api.GET('/users', { params: { query: { ...filters, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } } })), [filters, cursor]);

  const apply = (event: Event) => {
    event.preventDefault();
    setFilters({ ...(search.trim() ? { search: search.trim() } : {}), ...(status ? { status } : {}), ...(role.trim() ? { role: role.trim() } : {}) });
    pages.restart();
  };

  return (
    <>
      <PageTitle>{t('users.title')}</PageTitle>
      <div class="toolbar">
        <form class="filters" role="search" onSubmit={apply} aria-label={t('users.filters')}>
          <Field label={t('users.search')} id="user-search" type="search" value={search} onInput={(e: InputEvent) => setSearch((e.currentTarget as HTMLInputElement).value)} />
          <div class="field">
            <label for="user-status">{t('users.status')}</label>
            <select id="user-status" value={status} onChange={(e) => setStatus((e.currentTarget as HTMLSelectElement).value as Status | '')}>
              <option value="">{t('common.all')}</option>
              <option value="active">{t('users.status.active')}</option>
              <option value="disabled">{t('users.status.disabled')}</option>
            </select>
          </div>
          <Field label={t('users.role')} id="user-role" value={role} onInput={(e: InputEvent) => setRole((e.currentTarget as HTMLInputElement).value)} />
          <button type="submit">{t('users.filter')}</button>
        </form>
        {myPermissions.includes('users.create') && <a href={href('users', 'new')}>{t('users.new')}</a>}
      </div>
      <ListState loaded={page} empty={t('users.empty')}>
        {(items) => (
          <>
            <TableScroll>
              <table aria-busy={page.loading}>
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
                  {items.map((user) => (
                    <tr key={user.id}>
                      <td>
                        <a href={href('users', user.id)}>{user.email}</a>
                      </td>
                      <td>
                        {user.first_name} {user.last_name}
                      </td>
                      <td>
                        <span class={`badge ${user.status === 'active' ? 'ok' : 'bad'}`}>{t(`users.status.${user.status}`)}</span>
                      </td>
                      <td>{user.roles.join(', ') || t('common.none')}</td>
                      <td>{formatDate(user.last_sign_in_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <Pager label={t('users.pages')} previous={pages.previous} next={pages.next(page.data?.next_cursor)} number={pages.number} loading={page.loading} />
          </>
        )}
      </ListState>
    </>
  );
}

/** The permissions the named roles give (from GET /roles, where the admin role lists the whole catalogue). */
function permissionsOf(roles: readonly Role[], names: readonly string[]): string[] {
  return roles.filter((role) => names.includes(role.name)).flatMap((role) => role.permissions);
}

/**
 * The user's roles as checkboxes when the person may list roles (roles.manage), judged against the
 * roles as saved (`saved`, none for a new user), as the server does: a role the person may not
 * grant or take away is disabled, with why. Otherwise a comma-separated field: the server decides.
 */
function RolesInput({ roles, saved, myPermissions, value, onChange }: { roles: readonly Role[] | undefined; saved: readonly string[]; myPermissions: readonly string[]; value: string[]; onChange: (roles: string[]) => void }) {
  const { t } = useI18n();
  if (roles) {
    const { locked, hints } = toggleLocks(t, myPermissions, permissionsOf(roles, saved), roles, (role) => ({ has: saved.includes(role.name), gives: role.permissions }), {
      ids: { add: 'user-cannot-grant', remove: 'user-cannot-remove-roles' },
      add: t('users.cannotGrant'),
      remove: (permissions) => t('users.cannotRemoveRoles', { permissions }),
    });
    return (
      <>
        <fieldset>
          <legend>{t('users.roles')}</legend>
          <div class="checks">
            {roles.map((role) => (
              <Check key={role.id} id={`role-${role.id}`} label={role.name} checked={value.includes(role.name)} locked={locked(role)} onChange={(on) => onChange(on ? [...value, role.name] : value.filter((r) => r !== role.name))} />
            ))}
          </div>
        </fieldset>
        {hints}
      </>
    );
  }
  return (
    <Field
      label={t('users.roles')}
      id="user-roles"
      hint={t('users.rolesHint')}
      value={value.join(', ')}
      onInput={(e: InputEvent) => onChange((e.currentTarget as HTMLInputElement).value.split(',').map((r) => r.trim()).filter(Boolean))}
    />
  );
}

/** The user the New user form just created (its page then says so once). */
let justCreated: string | null = null;

function CreateUser({ myPermissions }: { myPermissions: readonly string[] }) {
  const { t } = useI18n();
  const roleList = useLoad(() => call(() => api.GET('/roles')), []);
  const [form, setForm] = useState({ email: '', first_name: '', last_name: '', password: '' });
  const [roles, setRoles] = useState<string[]>([]);
  const set = (field: keyof typeof form) => (e: InputEvent) => setForm({ ...form, [field]: (e.currentTarget as HTMLInputElement).value });
  const createLocked = lockedFor(t, 'create-why', lacking(myPermissions, ['users.create']));

  const { busy, error, submit } = useSubmit(async () => {
    const { password, ...rest } = form;
    const created = await call(() => api.POST('/users', { body: { ...rest, roles, ...(password ? { password } : {}) } }));
    justCreated = created.id;
    navigate('users', created.id);
  });

  return (
    <>
      <PageTitle>{t('users.createTitle')}</PageTitle>
      {myPermissions.includes('invitations.manage') && (
        <Notice>
          {t('users.inviteInstead')} <a href={href('invitations')}>{t('users.inviteLink')}</a>
        </Notice>
      )}
      <form onSubmit={submit} class="narrow">
        <Field label={t('users.email')} id="new-email" type="email" required value={form.email} onInput={set('email')} />
        <Field label={t('users.firstName')} id="new-first-name" required value={form.first_name} onInput={set('first_name')} />
        <Field label={t('users.lastName')} id="new-last-name" required value={form.last_name} onInput={set('last_name')} />
        <Field label={t('users.initialPassword')} id="new-password" type="password" autoComplete="new-password" hint={t('users.initialPasswordHint')} value={form.password} onInput={set('password')} />
        <RolesInput roles={roleList.data?.data} saved={[]} myPermissions={myPermissions} value={roles} onChange={setRoles} />
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="submit" disabled={busy || createLocked !== undefined} title={createLocked?.title} aria-describedby={createLocked?.describedBy}>
            {busy ? t('common.saving') : t('common.create')}
          </button>
          <a href={href('users')}>{t('common.cancel')}</a>
        </div>
        <Why locked={createLocked} />
      </form>
    </>
  );
}

function EditUser({ id, myPermissions }: { id: string; myPermissions: readonly string[] }) {
  // Readable with roles.manage: the roles' permissions tell what the user holds; without it the
  // server alone decides.
  const roles = useLoad(() => call(() => api.GET('/roles')), []);
  return (
    <TaggedEditor load={() => callTagged(() => api.GET('/users/{id}', { params: { path: { id } } }))} deps={[id]}>
      {(user, done) => <EditUserForm user={user} roleList={roles.data?.data} myPermissions={myPermissions} onChanged={done} />}
    </TaggedEditor>
  );
}

function EditUserForm({
  user: { data: user, etag },
  roleList,
  myPermissions,
  onChanged,
}: {
  user: Tagged<User>;
  roleList: readonly Role[] | undefined;
  myPermissions: readonly string[];
  onChanged: (outcome?: EditOutcome, said?: string) => void;
}) {
  const { t } = useI18n();
  const [firstName, setFirstName] = useState(user.first_name);
  const [lastName, setLastName] = useState(user.last_name);
  const [roles, setRoles] = useState<string[]>(user.roles);
  const [status, setStatus] = useState<Status>(user.status);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const saveLocked = lockedFor(t, 'save-why', lacking(myPermissions, ['users.update']));
  // Disabling or re-enabling needs users.disable and everything the user holds.
  const statusLocked = lockedFor(t, 'status-why', lacking(myPermissions, ['users.disable', ...(roleList ? permissionsOf(roleList, user.roles) : [])]));

  // Downloading the person's data needs users.export and everything the user holds (the server answers 404 otherwise).
  const exportLocked = lockedFor(t, 'export-why', lacking(myPermissions, ['users.export', ...(roleList ? permissionsOf(roleList, user.roles) : [])]));
  const [exported, setExported] = useState(false);
  const exportData = async () => {
    setBusy(true);
    setError(null);
    setExported(false);
    try {
      await downloadPersonalData(user.id);
      setExported(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  // Resetting the second factors needs its permission and everything the user holds (as the server judges it).
  const resetLocked = lockedFor(t, 'reset-why', lacking(myPermissions, ['users.reset_second_factors', ...(roleList ? permissionsOf(roleList, user.roles) : [])]));
  // Erasing needs its permission and everything the user holds (docs/ERASURE.md).
  const eraseLocked = lockedFor(t, 'erase-why', lacking(myPermissions, ['users.erase', ...(roleList ? permissionsOf(roleList, user.roles) : [])]));
  const erased = Boolean(user.erased_at);

  const run = async (action: () => Promise<unknown>, said?: string) => {
    setBusy(true);
    setError(null);
    onChanged();
    try {
      await unlessStale(async () => {
        await action();
        onChanged('saved', said);
      }, onChanged);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const submit = (event: Event) => {
    event.preventDefault();
    // The status is sent only when it changes: changing it needs what the user holds.
    const body = { first_name: firstName, last_name: lastName, roles, ...(status !== user.status ? { status } : {}) };
    const said = status === user.status ? undefined : t(status === 'disabled' ? 'users.disabled' : 'users.enabled', { email: user.email });
    void run(() => call(() => api.PATCH('/users/{id}', { params: { path: { id: user.id }, header: ifMatch(etag) }, body })), said);
  };
  const disable = () => {
    if (window.confirm(t('users.disableConfirm', { email: user.email }))) void run(() => call(() => api.DELETE('/users/{id}', { params: { path: { id: user.id }, header: ifMatch(etag) } })), t('users.disabled', { email: user.email }));
  };

  // A sensitive change: the client asks for a fresh proof when the server wants one (web/src/step-up.tsx).
  // Nothing of the user's record changes (no ETag moves): the form stays, with its own notice.
  const [factorsReset, setFactorsReset] = useState(false);
  // Just made on the page before: said once, on the first form of it.
  const [created] = useState(() => {
    const was = justCreated === user.id;
    justCreated = null;
    return was;
  });
  // The confirmation names what happens; then the step-up dialog if the session needs a fresh proof.
  const erase = () => {
    if (window.confirm(t('users.eraseConfirm', { email: user.email }))) void run(() => call(() => api.POST('/users/{id}/erasure', { params: { path: { id: user.id } } })), t('users.erased'));
  };
  const resetSecondFactors = async () => {
    if (!window.confirm(t('users.resetSecondFactorsConfirm', { email: user.email }))) return;
    setBusy(true);
    setError(null);
    setFactorsReset(false);
    try {
      await call(() => api.DELETE('/users/{id}/second-factors', { params: { path: { id: user.id } } }));
      setFactorsReset(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageTitle>{user.email}</PageTitle>
      {created && <Notice tone="success">{t('users.createdNotice', { email: user.email })}</Notice>}
      {factorsReset && <Notice tone="success">{t('users.secondFactorsReset', { email: user.email })}</Notice>}
      {exported && <Notice tone="success">{t('users.exported', { email: user.email })}</Notice>}
      {erased && <Notice tone="info">{t('users.erasedOn')}</Notice>}
      <p>
        <a href={href('users')}>{t('users.back')}</a>
      </p>
      <form onSubmit={submit} class="narrow">
        <Field label={t('users.firstName')} id="edit-first-name" required value={firstName} onInput={(e: InputEvent) => setFirstName((e.currentTarget as HTMLInputElement).value)} />
        <Field label={t('users.lastName')} id="edit-last-name" required value={lastName} onInput={(e: InputEvent) => setLastName((e.currentTarget as HTMLInputElement).value)} />
        <RolesInput roles={roleList} saved={user.roles} myPermissions={myPermissions} value={roles} onChange={setRoles} />
        <div class="field">
          <label for="edit-status">{t('users.status')}</label>
          <select id="edit-status" value={status} disabled={statusLocked !== undefined} title={statusLocked?.title} aria-describedby={statusLocked?.describedBy} onChange={(e) => setStatus((e.currentTarget as HTMLSelectElement).value as Status)}>
            <option value="active">{t('users.status.active')}</option>
            <option value="disabled">{t('users.status.disabled')}</option>
          </select>
        </div>
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="submit" disabled={busy || saveLocked !== undefined} title={saveLocked?.title} aria-describedby={saveLocked?.describedBy}>
            {busy ? t('common.saving') : t('common.save')}
          </button>
          {user.status === 'active' && (
            <button type="button" class="danger" disabled={busy || statusLocked !== undefined} title={statusLocked?.title} aria-describedby={statusLocked?.describedBy} onClick={disable}>
              {t('users.disable')}
            </button>
          )}
          <button type="button" class="danger" disabled={busy || resetLocked !== undefined} title={resetLocked?.title} aria-describedby={resetLocked?.describedBy} onClick={() => void resetSecondFactors()}>
            {t('users.resetSecondFactors')}
          </button>
          <button type="button" class="secondary" disabled={busy || exportLocked !== undefined} title={exportLocked?.title} aria-describedby={exportLocked?.describedBy} onClick={() => void exportData()}>
            {t('users.export')}
          </button>
          {!erased && (
            <button type="button" class="danger" disabled={busy || eraseLocked !== undefined} title={eraseLocked?.title} aria-describedby={eraseLocked?.describedBy} onClick={erase}>
              {t('users.erase')}
            </button>
          )}
        </div>
        <Why locked={saveLocked} />
        <Why locked={statusLocked} />
        <Why locked={resetLocked} />
        <Why locked={exportLocked} />
        {!erased && <Why locked={eraseLocked} />}
      </form>
    </>
  );
}

/** The page as the navigation opens it (its entry: users.entry.ts). */
export const Route = ({ id, me }: PageProps) => <UsersPage userId={id} myPermissions={me.permissions} />;
