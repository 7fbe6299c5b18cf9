// Checkboxes for permissions, grouped by resource (`users.list` -> users: list).
import { useI18n } from './i18n.js';

export function PermissionPicker({ legend, available, value, onChange, idPrefix }: { legend: string; available: readonly string[]; value: readonly string[]; onChange: (next: string[]) => void; idPrefix: string }) {
  const { t } = useI18n();
  const groups = new Map<string, string[]>();
  for (const permission of available) {
    const [resource = permission] = permission.split('.');
    groups.set(resource, [...(groups.get(resource) ?? []), permission]);
  }
  const toggle = (permission: string, on: boolean) => onChange(on ? [...value, permission].filter((p, i, all) => all.indexOf(p) === i) : value.filter((p) => p !== permission));
  return (
    <fieldset>
      <legend>{legend}</legend>
      {groups.size === 0 && <p class="empty">{t('permissions.none')}</p>}
      {[...groups].map(([resource, permissions]) => (
        <fieldset key={resource} class="group">
          <legend>{resource}</legend>
          <div class="checks">
            {permissions.map((permission) => (
              <label key={permission} for={`${idPrefix}-${permission}`}>
                <input type="checkbox" id={`${idPrefix}-${permission}`} value={permission} checked={value.includes(permission)} onChange={(e) => toggle(permission, (e.currentTarget as HTMLInputElement).checked)} />
                {permission}
              </label>
            ))}
          </div>
        </fieldset>
      ))}
    </fieldset>
  );
}
