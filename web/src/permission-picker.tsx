// Checkboxes for permissions, grouped by resource (`users.list` -> users: list). A permission the
// person may not toggle is shown disabled, with why (`locked`).
import { useI18n } from './i18n.js';

/** Why a permission's box cannot be toggled: a short `title`, and the id of the element that explains it (aria-describedby). */
export interface Locked {
  title: string;
  describedBy: string;
}

export function PermissionPicker({
  legend,
  available,
  value,
  onChange,
  idPrefix,
  locked = () => undefined,
}: {
  legend: string;
  available: readonly string[];
  value: readonly string[];
  onChange: (next: string[]) => void;
  idPrefix: string;
  locked?: (permission: string) => Locked | undefined;
}) {
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
            {permissions.map((permission) => {
              const why = locked(permission);
              return (
                <label key={permission} for={`${idPrefix}-${permission}`} title={why?.title}>
                  <input
                    type="checkbox"
                    id={`${idPrefix}-${permission}`}
                    value={permission}
                    checked={value.includes(permission)}
                    disabled={why !== undefined}
                    aria-describedby={why?.describedBy}
                    onChange={(e) => toggle(permission, (e.currentTarget as HTMLInputElement).checked)}
                  />
                  {permission}
                </label>
              );
            })}
          </div>
        </fieldset>
      ))}
    </fieldset>
  );
}
