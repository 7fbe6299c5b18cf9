// One readable line per audit event, in the chosen language: "Ada Lovelace rotated key ci-deploy,
// grace 1 h, from 203.0.113.7". Kept free of the DOM so tests can use it.
import type { components } from '../../generated/openapi.js';
import { dictionaries, type MessageKey, type T } from './messages.js';

export type AuditEvent = components['schemas']['AuditEvent'];

/** 3600 -> "1 h", 1800 -> "30 min", 45 -> "45 s". */
export function formatDuration(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

function actorName(event: AuditEvent, t: T): string {
  const { actor } = event;
  switch (actor.type) {
    case 'user':
      return actor.label ?? actor.id ?? t('audit.someone');
    case 'api_key':
      return t('audit.actor.key', { name: actor.label ?? actor.id ?? '?' });
    case 'cli':
      return t('audit.actor.cli', { name: actor.label ?? '?' });
    case 'system':
      return t('audit.actor.system');
    case 'anonymous':
      return t('audit.actor.anonymous');
    default:
      return t('audit.actor.unknown');
  }
}

const REASONS = ['wrong_password', 'unknown_email', 'account_disabled', 'signed_out', 'revoked_by_user', 'revoked_by_administrator', 'password_changed', 'user_disabled', 'refresh_token_reused', 'second_factors_reset', 'password_reset'] as const;

/** The reason in words; one this page does not know is shown as the server sent it. */
function reason(event: AuditEvent, t: T): string {
  const value = event.details.reason;
  if (typeof value !== 'string') return '?';
  return (REASONS as readonly string[]).includes(value) ? t(`audit.reason.${value as (typeof REASONS)[number]}`) : value;
}

export function describeEvent(event: AuditEvent, t: T): string {
  const target = event.target ? (event.target.label ?? event.target.id) : t('audit.someone');
  let line: string;
  if (event.type === 'sign_in_failed' && !event.target) line = t('audit.line.sign_in_failed.unknown');
  // A rotated key's previous secret, reported in its grace period, was stopped; the key was not revoked.
  else if (event.type === 'api_key_leak_reported' && event.details.leaked === 'previous') line = t('audit.line.api_key_leak_reported.previous', { target });
  else line = t(`auditLine.${event.type}`, { actor: actorName(event, t), target, reason: reason(event, t) });
  const extras: string[] = [];
  if (event.type === 'api_key_rotated' && typeof event.details.grace_period_seconds === 'number') {
    const grace = event.details.grace_period_seconds;
    extras.push(grace > 0 ? t('audit.grace', { duration: formatDuration(grace) }) : t('audit.noGrace'));
  }
  if (event.ip_address) extras.push(t('audit.from', { ip: event.ip_address }));
  return extras.length > 0 ? `${line}, ${extras.join(', ')}` : line;
}

/** An instant as the API writes it (UTC): shown in the person's time zone and language, as the headline's time. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

const empty = (value: unknown) => value === null || value === undefined || (Array.isArray(value) && value.length === 0);

/** How the page names what the changes mention: an instant in the person's time, an id by the name it knows (else the id). */
export interface Naming {
  formatDate(value: string): string;
  nameOf?(id: string): string | undefined;
}

const show = (value: unknown, t: T, naming: Naming): string => {
  if (empty(value)) return t('audit.nothing');
  if (Array.isArray(value)) return value.map((item) => show(item, t, naming)).join(', ');
  if (typeof value === 'string' && INSTANT.test(value)) return naming.formatDate(value);
  if (typeof value === 'string') return naming.nameOf?.(value) ?? value;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
};

/**
 * "permissions: users.list → users.list, users.read; name: a → b" (fields in words), or "" when nothing changed;
 * instants in the person's time and ids by name (`naming`), a field empty before and after left out.
 */
export function describeChanges(event: AuditEvent, t: T, naming: Naming = { formatDate: (value) => value }): string {
  if (!event.changes) return '';
  const before = event.changes.before ?? {};
  const after = event.changes.after ?? {};
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((field) => !(empty(before[field]) && empty(after[field])));
  return fields.map((field) => `${fieldName(field, t)}: ${show(before[field], t, naming)} → ${show(after[field], t, naming)}`).join('; ');
}

/** A changed field in words ("assignee_id" → "assignee"), or its API name when the page has no wording for it. */
function fieldName(field: string, t: T): string {
  const key = `audit.field.${field}`;
  return key in dictionaries.en ? t(key as MessageKey) : field;
}
