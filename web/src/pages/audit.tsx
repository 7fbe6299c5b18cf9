// Audit: the journal of sign-ins, sessions and changes of rights, newest first, one readable line
// per event; filters by event, actor, target and time; paged by cursor like the users.
import type { PageProps } from '../page-entry.js';
import { useState } from 'preact/hooks';
import { api, call } from '../api/client.js';
import type { components } from '../../../generated/openapi.js';
import { AuditEventType } from 'virtual:contract-enums';
import { describeChanges, describeEvent } from '../audit-line.js';
import { useI18n } from '../i18n.js';
import { useLoad } from '../load.js';
import { Field, ListState, PageTitle, Pager, useCursorPages, TableScroll } from '../ui.js';

type EventType = components['schemas']['AuditEventType'];
/** Every audit event type of the contract (web/vite.config.ts), so the filter never falls behind it. */
const TYPES: readonly EventType[] = AuditEventType;
const PAGE_SIZE = 20;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Filters {
  type?: EventType[];
  actor_id?: string;
  target_id?: string;
  since?: string;
  before?: string;
}

/** A datetime-local value (the browser's time zone) as an ISO instant; empty stays unset. */
const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);

export function AuditPage() {
  const { t, formatDate } = useI18n();
  const [form, setForm] = useState({ type: '', actor: '', target: '', since: '', before: '' });
  const [filters, setFilters] = useState<Filters>({});
  const pages = useCursorPages();
  const { cursor } = pages;
  const page = useLoad(() => call(() => api.GET('/audit-events', { params: { query: { ...filters, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } } })), [filters, cursor]);
  // The people and keys the person may see, offered by name in "Done by" and "Concerning" (the
  // field takes the id): what GET /users and GET /api-keys answer them, nothing where they may not.
  const people = useLoad(() => call(() => api.GET('/users', { params: { query: { limit: 200 } } })).catch(() => undefined), []);
  const keys = useLoad(() => call(() => api.GET('/api-keys')).catch(() => undefined), []);
  const known = [
    ...(people.data?.data ?? []).map((user) => ({ id: user.id, label: `${user.first_name} ${user.last_name} (${user.email})` })),
    ...(keys.data?.data ?? []).map((key) => ({ id: key.id, label: t('audit.actor.key', { name: key.name }) })),
  ];
  // In the changes, a person's or key's id is shown as its name ("assignee_id: nothing → Ada Lovelace").
  const names = new Map([
    ...(people.data?.data ?? []).map((user) => [user.id, `${user.first_name} ${user.last_name}`] as const),
    ...(keys.data?.data ?? []).map((key) => [key.id, key.name] as const),
  ]);
  const set = (field: keyof typeof form) => (e: Event) => setForm({ ...form, [field]: (e.currentTarget as HTMLInputElement).value });

  const apply = (event: Event) => {
    event.preventDefault();
    const since = instant(form.since);
    const before = instant(form.before);
    setFilters({
      ...(form.type ? { type: [form.type as EventType] } : {}),
      ...(UUID.test(form.actor.trim()) ? { actor_id: form.actor.trim() } : {}),
      ...(UUID.test(form.target.trim()) ? { target_id: form.target.trim() } : {}),
      ...(since ? { since } : {}),
      ...(before ? { before } : {}),
    });
    pages.restart();
  };

  return (
    <>
      <PageTitle>{t('audit.title')}</PageTitle>
      <form class="filters" role="search" onSubmit={apply} aria-label={t('audit.filters')}>
        <div class="field">
          <label for="audit-type">{t('audit.type')}</label>
          <select id="audit-type" value={form.type} onChange={set('type')}>
            <option value="">{t('common.all')}</option>
            {TYPES.map((type) => (
              <option key={type} value={type}>
                {t(`auditType.${type}`)}
              </option>
            ))}
          </select>
        </div>
        <Field label={t('audit.actor')} id="audit-actor" value={form.actor} onInput={set('actor')} pattern={UUID.source} list="audit-known" autoComplete="off" />
        <Field label={t('audit.target')} id="audit-target" value={form.target} onInput={set('target')} pattern={UUID.source} list="audit-known" autoComplete="off" />
        <datalist id="audit-known">
          {known.map((item) => (
            <option key={item.id} value={item.id} label={item.label} />
          ))}
        </datalist>
        <Field label={t('audit.since')} id="audit-since" type="datetime-local" value={form.since} onInput={set('since')} />
        <Field label={t('audit.before')} id="audit-before" type="datetime-local" value={form.before} onInput={set('before')} />
        <button type="submit">{t('audit.filter')}</button>
      </form>
      <ListState loaded={page} empty={t('audit.empty')}>
        {(items) => (
          <>
            <TableScroll>
              <table aria-busy={page.loading}>
                <thead>
                  <tr>
                    <th scope="col">{t('audit.when')}</th>
                    <th scope="col">{t('audit.event')}</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((event) => (
                    <tr key={event.id} data-event-type={event.type}>
                      <td>
                        <time dateTime={event.occurred_at}>{formatDate(event.occurred_at)}</time>
                      </td>
                      <td>
                        <span class="line">{describeEvent(event, t)}</span>
                        {event.changes && <small class="changes">{describeChanges(event, t, { formatDate, nameOf: (id) => names.get(id) })}</small>}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <Pager label={t('audit.pages')} previous={pages.previous} next={pages.next(page.data?.next_cursor)} number={pages.number} loading={page.loading} />
          </>
        )}
      </ListState>
    </>
  );
}

/** The page as the navigation opens it (its entry: audit.entry.ts). */
export const Route = (_: PageProps) => <AuditPage />;
