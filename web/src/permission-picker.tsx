// Checkboxes for permissions, grouped by resource (`users.list` -> users: list), and the one
// checkbox every rights picker uses (permissions of a role or a key, roles of a user): one the
// person may not toggle is shown disabled, with why (`locked`).
import { Permission as CONTRACT_ORDER } from 'virtual:contract-enums';
import { useI18n, type MessageKey } from './i18n.js';
import type { Locked } from './ui.js';

/** Permissions in the contract's order, in every picker (a role's, a key's): the same place each time. */
const rank = (permission: string) => {
  const at = (CONTRACT_ORDER as readonly string[]).indexOf(permission);
  return at === -1 ? CONTRACT_ORDER.length : at;
};

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
  for (const permission of [...available].sort((a, b) => rank(a) - rank(b))) {
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
          <ul class="permissions">
            {permissions.map((permission) => (
              <li key={permission}>
                <Check
                  id={`${idPrefix}-${permission}`}
                  label={permission}
                  value={permission}
                  checked={value.includes(permission)}
                  locked={locked(permission)}
                  onChange={(on) => toggle(permission, on)}
                />
                {/* Read after its checkbox; not its description: that one says why a box is locked. */}
                <small class="hint">
                  {t(`permission.${permission}` as MessageKey)}
                </small>
              </li>
            ))}
          </ul>
        </fieldset>
      ))}
    </fieldset>
  );
}

/** A checkbox and its label; when `locked`, disabled and greyed, the reason as the label's title and its hint tied by aria-describedby. */
export function Check({ id, label, value, checked, locked, onChange }: { id: string; label: string; value?: string; checked: boolean; locked?: Locked | undefined; onChange: (on: boolean) => void }) {
  return (
    <label for={id} title={locked?.title}>
      <input
        type="checkbox"
        id={id}
        value={value}
        checked={checked}
        disabled={locked !== undefined}
        aria-describedby={locked?.describedBy}
        onChange={(e) => onChange((e.currentTarget as HTMLInputElement).checked)}
      />
      {label}
    </label>
  );
}
