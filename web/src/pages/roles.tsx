// Roles: the list, create, and edit a role's permissions. The built-in admin role is read-only. A
// permission the person may not add or remove is shown disabled, with why (the server's rule,
// docs/AUTH.md: PATCH /roles/{id} needs every permission added, and every permission the role
// holds if any is removed).
import type { PageProps } from '../page-entry.js';
import { useEffect, useState } from 'preact/hooks';
import { api, call, callTagged, ifMatch } from '../api/client.js';
import { TaggedEditor, unlessStale } from '../tagged-editor.js';
import type { components } from '../../../generated/openapi.js';
import { useI18n } from '../i18n.js';
import { useLoad, useSubmit } from '../load.js';
import { Check, PermissionPicker } from '../permission-picker.js';
import { href, navigate } from '../router.js';
import { ErrorMessage, Field, ListState, Notice, PageTitle, toggleLocks, TableScroll } from '../ui.js';

type Role = components['schemas']['Role'];
type Permission = components['schemas']['Permission'];

export function RolesPage({ roleId, myPermissions }: { roleId?: string | undefined; myPermissions: readonly Permission[] }) {
  const { t } = useI18n();
  const roles = useLoad(() => call(() => api.GET('/roles')), []);
  const catalogue = useLoad(() => call(() => api.GET('/permissions')), []);
  const editing = roleId === 'new' ? 'new' : roles.data?.data.find((role) => role.id === roleId);
  // What the last save did, said above the list it returns to; opening a form puts it away.
  const [said, setSaid] = useState<string | null>(null);
  useEffect(() => {
    if (roleId) setSaid(null);
  }, [roleId]);
  const saved = (message: string) => (setSaid(message), roles.reload(), navigate('roles'));

  return (
    <>
      <PageTitle>{t('roles.title')}</PageTitle>
      {said && <Notice tone="success">{said}</Notice>}
      <div class="toolbar">
        <a href={href('roles', 'new')}>{t('roles.new')}</a>
      </div>
      {editing === 'new' && catalogue.data && (
        <RoleForm key="new" role={null} available={catalogue.data.data} myPermissions={myPermissions} onSaved={(name) => saved(t('roles.created', { name }))} />
      )}
      {editing && editing !== 'new' && catalogue.data && (
        <EditRole key={editing.id} id={editing.id} available={catalogue.data.data} myPermissions={myPermissions} onSaved={(name) => saved(t('roles.saved', { name }))} />
      )}
      <ErrorMessage error={catalogue.error} onRetry={catalogue.reload} />
      <ListState loaded={roles} empty={t('roles.empty')}>
        {(items) => (
          <TableScroll>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('roles.name')}</th>
                  <th scope="col">{t('roles.description')}</th>
                  <th scope="col">{t('roles.permissions')}</th>
                  <th scope="col">
                    <span class="visually-hidden">{t('common.actions')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((role) => (
                  <tr key={role.id}>
                    <td>
                      {role.name} {role.built_in && <span class="badge">{t('roles.builtIn')}</span>} {role.requires_second_factor && <span class="badge">{t('roles.secondFactorBadge')}</span>}
                    </td>
                    <td>{role.description}</td>
                    <td>{role.permissions.join(', ') || t('common.none')}</td>
                    <td>
                      {!role.built_in && (
                        <a href={href('roles', role.id)} aria-label={t('roles.editNamed', { name: role.name })}>
                          {t('common.edit')}
                        </a>
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

/** A role read on its own, with its ETag (web/src/tagged-editor.tsx); saved, the page goes back to the list. */
function EditRole({ id, available, myPermissions, onSaved }: { id: string; available: readonly Permission[]; myPermissions: readonly Permission[]; onSaved: (name: string) => void }) {
  return (
    <TaggedEditor load={() => callTagged(() => api.GET('/roles/{id}', { params: { path: { id } } }))} deps={[id]}>
      {(role, done) => <RoleForm role={role.data} etag={role.etag} available={available} myPermissions={myPermissions} onSaved={onSaved} onStale={() => done('stale')} />}
    </TaggedEditor>
  );
}

function RoleForm({
  role,
  etag = '',
  available,
  myPermissions,
  onSaved,
  onStale = () => {},
}: {
  role: Role | null;
  etag?: string;
  available: readonly Permission[];
  myPermissions: readonly Permission[];
  onSaved: (name: string) => void;
  onStale?: () => void;
}) {
  const { t } = useI18n();
  const [name, setName] = useState(role?.name ?? '');
  const [description, setDescription] = useState(role?.description ?? '');
  const [permissions, setPermissions] = useState<string[]>(role?.permissions ?? []);
  const [requiresSecondFactor, setRequiresSecondFactor] = useState(role?.requires_second_factor ?? false);

  // Judged against the role as saved, as the server does: adding needs the permission; removing
  // any needs every permission the role holds.
  const saved: readonly string[] = role?.permissions ?? [];
  const { locked, hints } = toggleLocks<string>(t, myPermissions, saved, available, (permission) => ({ has: saved.includes(permission), gives: [permission] }), {
    ids: { add: 'role-cannot-add', remove: 'role-cannot-remove' },
    add: t('roles.cannotAdd'),
    remove: (permissions) => t('roles.cannotRemove', { permissions }),
  });

  const { busy, error, submit } = useSubmit(async () => {
    const body = { name, description, permissions: permissions as Permission[], requires_second_factor: requiresSecondFactor };
    await unlessStale(async () => {
      if (role) await call(() => api.PATCH('/roles/{id}', { params: { path: { id: role.id }, header: ifMatch(etag) }, body }));
      else await call(() => api.POST('/roles', { body }));
      onSaved(name);
    }, onStale);
  });

  return (
    <form onSubmit={submit} class="panel" aria-labelledby="role-form-title">
      <h2 id="role-form-title">{role ? t('roles.editTitle', { name: role.name }) : t('roles.createTitle')}</h2>
      <Field label={t('roles.name')} id="role-name" required maxLength={64} value={name} onInput={(e: InputEvent) => setName((e.currentTarget as HTMLInputElement).value)} />
      <Field label={t('roles.description')} id="role-description" maxLength={500} value={description} onInput={(e: InputEvent) => setDescription((e.currentTarget as HTMLInputElement).value)} />
      <PermissionPicker legend={t('roles.permissions')} idPrefix="role-permission" available={available} value={permissions} onChange={setPermissions} locked={locked} />
      {hints}
      <Check id="role-requires-second-factor" label={t('roles.requiresSecondFactor')} checked={requiresSecondFactor} onChange={setRequiresSecondFactor} />
      <p class="hint">{t('roles.requiresSecondFactorHint')}</p>
      <ErrorMessage error={error} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? t('common.saving') : t('common.save')}
        </button>
        <a href={href('roles')}>{t('common.cancel')}</a>
      </div>
    </form>
  );
}

/** The page as the navigation opens it (its entry: roles.entry.ts). */
export const Route = ({ id, me }: PageProps) => <RolesPage roleId={id} myPermissions={me.permissions} />;
