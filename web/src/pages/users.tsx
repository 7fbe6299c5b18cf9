// Users: a paged list (cursor) with filters, create, edit names/roles/status, disable. Disabling
// someone who holds permissions the signed-in person lacks is shown disabled, with why.
import { useState } from 'preact/hooks';
import { api, call } from '../api/client.js';
import type { components } from '../../../generated/openapi.js';
import { useI18n } from '../i18n.js';
import { useLoad, useSubmit } from '../load.js';
import { href, navigate } from '../router.js';
import { ErrorMessage, Field, ListState, Loading, Notice, PageTitle } from '../ui.js';
import { lacking } from '../authority.js';

type User = components['schemas']['User'];
type Status = User['status'];
const PAGE_SIZE = 20;

export function UsersPage({ userId, myPermissions }: { userId?: string | undefined; myPermissions: readonly string[] }) {
  if (userId === 'new') return <CreateUser />;
  if (userId) return <EditUser id={userId} myPermissions={myPermissions} />;
  return <UserList />;
}

function UserList() {
  const { t, formatDate } = useI18n();
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState<Status | ''>('');
  const [role, setRole] = useState('');
  const [filters, setFilters] = useState<{ search?: string; status?: Status; role?: string }>({});
  // Cursors of the pages seen so far, so "previous" needs no server support.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => call(() => api.GET('/users', { params: { query: { ...filters, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } } })), [filters, cursor]);
  const nextCursor = page.data?.next_cursor;

  const apply = (event: Event) => {
    event.preventDefault();
    setFilters({ ...(search.trim() ? { search: search.trim() } : {}), ...(status ? { status } : {}), ...(role.trim() ? { role: role.trim() } : {}) });
    setCursors([undefined]);
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
        <a href={href('users', 'new')}>{t('users.new')}</a>
      </div>
      <ListState loaded={page} empty={t('users.empty')}>
        {(items) => (
          <>
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
            <nav class="actions" aria-label={t('users.pages')}>
              <button type="button" class="secondary" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
                {t('common.previous')}
              </button>
              <button type="button" class="secondary" disabled={!nextCursor} onClick={() => nextCursor && setCursors([...cursors, nextCursor])}>
                {t('common.next')}
              </button>
            </nav>
          </>
        )}
      </ListState>
    </>
  );
}

/** Role names as checkboxes when the person may list roles, otherwise a comma-separated field. */
function RolesInput({ value, onChange }: { value: string[]; onChange: (roles: string[]) => void }) {
  const { t } = useI18n();
  const roles = useLoad(() => call(() => api.GET('/roles')), []);
  if (roles.data) {
    return (
      <fieldset>
        <legend>{t('users.roles')}</legend>
        <div class="checks">
          {roles.data.data.map((role) => (
            <label key={role.id} for={`role-${role.id}`}>
              <input type="checkbox" id={`role-${role.id}`} checked={value.includes(role.name)} onChange={(e) => onChange((e.currentTarget as HTMLInputElement).checked ? [...value, role.name] : value.filter((r) => r !== role.name))} />
              {role.name}
            </label>
          ))}
        </div>
      </fieldset>
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

function CreateUser() {
  const { t } = useI18n();
  const [form, setForm] = useState({ email: '', first_name: '', last_name: '', password: '' });
  const [roles, setRoles] = useState<string[]>([]);
  const set = (field: keyof typeof form) => (e: InputEvent) => setForm({ ...form, [field]: (e.currentTarget as HTMLInputElement).value });

  const { busy, error, submit } = useSubmit(async () => {
    const { password, ...rest } = form;
    const created = await call(() => api.POST('/users', { body: { ...rest, roles, ...(password ? { password } : {}) } }));
    navigate('users', created.id);
  });

  return (
    <>
      <PageTitle>{t('users.createTitle')}</PageTitle>
      <form onSubmit={submit} class="narrow">
        <Field label={t('users.email')} id="new-email" type="email" required value={form.email} onInput={set('email')} />
        <Field label={t('users.firstName')} id="new-first-name" required value={form.first_name} onInput={set('first_name')} />
        <Field label={t('users.lastName')} id="new-last-name" required value={form.last_name} onInput={set('last_name')} />
        <Field label={t('users.initialPassword')} id="new-password" type="password" autoComplete="new-password" hint={t('users.initialPasswordHint')} value={form.password} onInput={set('password')} />
        <RolesInput value={roles} onChange={setRoles} />
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? t('common.saving') : t('common.create')}
          </button>
          <a href={href('users')}>{t('common.cancel')}</a>
        </div>
      </form>
    </>
  );
}

function EditUser({ id, myPermissions }: { id: string; myPermissions: readonly string[] }) {
  const { t } = useI18n();
  const user = useLoad(() => call(() => api.GET('/users/{id}', { params: { path: { id } } })), [id]);
  // What the user holds, from the roles' permissions (readable with roles.manage; without it the
  // server alone decides).
  const roles = useLoad(() => call(() => api.GET('/roles')), []);
  const held = roles.data && user.data ? roles.data.data.filter((role) => user.data!.roles.includes(role.name)).flatMap((role) => role.permissions) : [];
  // Kept here: the form below is rebuilt from the saved user after each change.
  const [saved, setSaved] = useState(false);
  if (user.error) return <ErrorMessage error={user.error} onRetry={user.reload} />;
  if (!user.data) return <Loading />;
  return (
    <>
      {saved && <Notice tone="success">{t('common.saved')}</Notice>}
      <EditUserForm key={user.data.updated_at} user={user.data} missing={lacking(myPermissions, held)} onChanged={(done) => (setSaved(done), done && user.reload())} />
    </>
  );
}

/** `missing`: permissions the user holds and the signed-in person lacks; then neither may they disable or re-enable the user. */
function EditUserForm({ user, missing, onChanged }: { user: User; missing: string[]; onChanged: (saved: boolean) => void }) {
  const { t } = useI18n();
  const [firstName, setFirstName] = useState(user.first_name);
  const [lastName, setLastName] = useState(user.last_name);
  const [roles, setRoles] = useState<string[]>(user.roles);
  const [status, setStatus] = useState<Status>(user.status);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    onChanged(false);
    try {
      await action();
      onChanged(true);
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
    void run(() => call(() => api.PATCH('/users/{id}', { params: { path: { id: user.id } }, body })));
  };
  const disable = () => {
    if (window.confirm(t('users.disableConfirm', { email: user.email }))) void run(() => call(() => api.DELETE('/users/{id}', { params: { path: { id: user.id } } })));
  };

  return (
    <>
      <PageTitle>{user.email}</PageTitle>
      <p>
        <a href={href('users')}>{t('users.back')}</a>
      </p>
      <form onSubmit={submit} class="narrow">
        <Field label={t('users.firstName')} id="edit-first-name" required value={firstName} onInput={(e: InputEvent) => setFirstName((e.currentTarget as HTMLInputElement).value)} />
        <Field label={t('users.lastName')} id="edit-last-name" required value={lastName} onInput={(e: InputEvent) => setLastName((e.currentTarget as HTMLInputElement).value)} />
        <RolesInput value={roles} onChange={setRoles} />
        <div class="field">
          <label for="edit-status">{t('users.status')}</label>
          <select
            id="edit-status"
            value={status}
            disabled={missing.length > 0}
            aria-describedby={missing.length > 0 ? 'outranked-why' : undefined}
            onChange={(e) => setStatus((e.currentTarget as HTMLSelectElement).value as Status)}
          >
            <option value="active">{t('users.status.active')}</option>
            <option value="disabled">{t('users.status.disabled')}</option>
          </select>
        </div>
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? t('common.saving') : t('common.save')}
          </button>
          {user.status === 'active' && (
            <button type="button" class="danger" disabled={busy || missing.length > 0} aria-describedby={missing.length > 0 ? 'outranked-why' : undefined} onClick={disable}>
              {t('users.disable')}
            </button>
          )}
        </div>
        {missing.length > 0 && (
          <p id="outranked-why" class="hint">
            {t('authority.needs', { permissions: missing.join(', ') })}
          </p>
        )}
      </form>
    </>
  );
}
