// Meetings: a week view (Monday to Sunday, in the browser's time zone), previous and next week as
// links (`#/meetings/<Monday>`), the people attending each meeting, and a form to plan one or
// change it. The permission is the only source of a right (docs/AUTH.md): Plan needs
// meetings.create, Save meetings.update, Delete meetings.delete, whoever organises the meeting;
// choosing attendees searches GET /users, so it needs users.list.
import type { PageProps } from '../page-entry.js';
import { useState } from 'preact/hooks';
import { api, call, callTagged, ifMatch } from '../api/client.js';
import { TaggedEditor, unlessStale } from '../tagged-editor.js';
import type { components } from '../../../generated/openapi.js';
import { useI18n, type T } from '../i18n.js';
import { useLoad, useSubmit } from '../load.js';
import { href } from '../router.js';
import { lacking } from '../authority.js';
import { ErrorMessage, Field, Loading, Notice, PageTitle, Why, lockedFor } from '../ui.js';

type Meeting = components['schemas']['Meeting'];
type Person = components['schemas']['Person'];
type Permission = components['schemas']['Permission'];

const DAY_MS = 24 * 3600_000;
/** A week of everyone's meetings may be long: the view reads at most this many pages of 200. */
const MAX_PAGES = 5;

const pad = (n: number) => String(n).padStart(2, '0');
/** A local date as `YYYY-MM-DD` (the route's week). */
const dateKey = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
/** A local time as an `<input type="datetime-local">` value. */
const localInput = (d: Date) => `${dateKey(d)}T${pad(d.getHours())}:${pad(d.getMinutes())}`;

/** Monday 00:00 (local time) of the week of `day`, or of the `YYYY-MM-DD` given. */
function mondayOf(key: string | undefined): Date {
  const match = key ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(key) : null;
  const day = match ? new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : new Date();
  day.setHours(0, 0, 0, 0);
  day.setDate(day.getDate() - ((day.getDay() + 6) % 7));
  return day;
}
const addDays = (d: Date, days: number) => new Date(d.getFullYear(), d.getMonth(), d.getDate() + days);

export function MeetingsPage({ week, myPermissions }: { week?: string | undefined; myPermissions: readonly Permission[] }) {
  const { t, language } = useI18n();
  const monday = mondayOf(week);
  const nextMonday = addDays(monday, 7);
  const [mine, setMine] = useState(true);
  const [editing, setEditing] = useState<Meeting | 'new' | null>(null);
  const meetings = useLoad(async () => {
    const data: Meeting[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const query = { from: monday.toISOString(), until: nextMonday.toISOString(), limit: 200, ...(mine ? { attendee_id: 'me' } : {}), ...(cursor ? { cursor } : {}) };
      const answer = await call(() => api.GET('/meetings', { params: { query } }));
      data.push(...answer.data);
      if (!answer.next_cursor) return { data, complete: true };
      cursor = answer.next_cursor;
    }
    return { data, complete: false };
  }, [monday.getTime(), mine]);

  const createLocked = lockedFor(t, 'plan-why', lacking(myPermissions, ['meetings.create']));
  const dayTitle = new Intl.DateTimeFormat(language, { weekday: 'long', day: 'numeric', month: 'long' });
  const weekTitle = new Intl.DateTimeFormat(language, { dateStyle: 'long' });
  const days = Array.from({ length: 7 }, (_, i) => addDays(monday, i));
  /** A meeting is shown on the day it starts (one that started before Monday, on Monday). */
  const dayOf = (m: Meeting) => Math.max(0, Math.min(6, Math.floor((new Date(m.starts_at).getTime() - monday.getTime()) / DAY_MS)));

  return (
    <>
      <PageTitle>{t('meetings.title')}</PageTitle>
      <div class="toolbar">
        <nav class="actions" aria-label={t('meetings.weeks')}>
          <a href={href('meetings', dateKey(addDays(monday, -7)))}>{t('meetings.previousWeek')}</a>
          <a href={href('meetings', dateKey(mondayOf(undefined)))}>{t('meetings.thisWeek')}</a>
          <a href={href('meetings', dateKey(nextMonday))}>{t('meetings.nextWeek')}</a>
        </nav>
        <label class="inline">
          <input type="checkbox" checked={mine} onChange={(e) => setMine((e.currentTarget as HTMLInputElement).checked)} /> {t('meetings.mine')}
        </label>
        <button type="button" disabled={createLocked !== undefined} title={createLocked?.title} aria-describedby={createLocked?.describedBy} onClick={() => setEditing('new')}>
          {t('meetings.new')}
        </button>
      </div>
      <Why locked={createLocked} />
      {editing && (
        <EditMeeting
          key={editing === 'new' ? 'new' : editing.id}
          listed={editing === 'new' ? null : editing}
          monday={monday}
          myPermissions={myPermissions}
          onStale={meetings.reload}
          onDone={(changed) => {
            setEditing(null);
            if (changed) meetings.reload();
          }}
        />
      )}
      <h2 id="week-title">{t('meetings.week', { date: weekTitle.format(monday) })}</h2>
      {meetings.error ? (
        <ErrorMessage error={meetings.error} onRetry={meetings.reload} />
      ) : !meetings.data ? (
        <Loading />
      ) : (
        <>
          {!meetings.data.complete && <Notice tone="warning">{t('meetings.more')}</Notice>}
          <ol class="week" aria-labelledby="week-title">
            {days.map((day, i) => {
              const items = meetings.data!.data.filter((m) => dayOf(m) === i);
              return (
                <li key={i} class="day">
                  <h3>{dayTitle.format(day)}</h3>
                  {items.length === 0 ? (
                    <p class="empty">{t('meetings.none')}</p>
                  ) : (
                    <ul>
                      {items.map((m) => (
                        <MeetingItem key={m.id} meeting={m} t={t} language={language} onOpen={() => setEditing(m)} />
                      ))}
                    </ul>
                  )}
                </li>
              );
            })}
          </ol>
        </>
      )}
    </>
  );
}

function MeetingItem({ meeting, t, language, onOpen }: { meeting: Meeting; t: T; language: string; onOpen: () => void }) {
  const time = new Intl.DateTimeFormat(language, { hour: '2-digit', minute: '2-digit' });
  const cancelled = meeting.status === 'cancelled';
  return (
    <li class={cancelled ? 'meeting cancelled' : 'meeting'}>
      <span class="when">
        <time dateTime={meeting.starts_at}>{time.format(new Date(meeting.starts_at))}</time>–<time dateTime={meeting.ends_at}>{time.format(new Date(meeting.ends_at))}</time>
      </span>{' '}
      <button type="button" class="link" onClick={onOpen}>
        {meeting.title}
      </button>
      {cancelled && <span class="badge bad">{t('meetings.status.cancelled')}</span>}
      {meeting.location && <span class="where"> · {meeting.location}</span>}
      <span class="people">
        {t('meetings.with', { people: meeting.attendees.map((p) => personLabel(t, p, meeting.organizer_id)).join(', ') })}
      </span>
    </li>
  );
}

/** A person's name, marked when they organise the meeting or are disabled. */
function personLabel(t: T, person: Person, organizerId: string | undefined): string {
  let label = person.label;
  if (person.id === organizerId) label = t('meetings.organizerNamed', { name: label });
  if (person.status === 'disabled') label = t('meetings.disabledNamed', { name: label });
  return label;
}

type FormProps = { monday: Date; myPermissions: readonly Permission[]; onDone: (changed: boolean) => void };

/**
 * The meeting opened from the week, read again on its own with its ETag: the change is sent with
 * If-Match, so it never overwrites someone else's (docs/SAFE-WRITES.md). A person without
 * meetings.read cannot read it alone: the form then shows the week's copy and sends no tag (the
 * write goes through as any untagged one would).
 */
function EditMeeting({ listed, onStale, ...props }: FormProps & { listed: Meeting | null; onStale: () => void }) {
  const tagged = listed !== null && lacking(props.myPermissions, ['meetings.read']).length === 0;
  return (
    <TaggedEditor
      load={async () => (tagged ? callTagged(() => api.GET('/meetings/{id}', { params: { path: { id: listed.id } } })) : { data: listed, etag: '' })}
      deps={[listed?.id]}
      onStale={onStale}
    >
      {(meeting, done) => <MeetingForm meeting={meeting.data} etag={meeting.etag} {...props} onStale={() => done('stale')} />}
    </TaggedEditor>
  );
}

function MeetingForm({ meeting, etag, monday, myPermissions, onDone, onStale }: FormProps & { meeting: Meeting | null; etag: string; onStale: () => void }) {
  const { t } = useI18n();
  // A new meeting: Monday of the shown week (or today, in this week), 09:00 to 10:00; never a time
  // already past: then the next full hour.
  const defaultStart = (() => {
    const now = new Date();
    const day = now >= monday && now < addDays(monday, 7) ? now : monday;
    const nine = new Date(day.getFullYear(), day.getMonth(), day.getDate(), 9, 0);
    if (nine > now) return nine;
    const next = new Date(now);
    next.setHours(now.getHours() + 1, 0, 0, 0);
    return next;
  })();
  const [title, setTitle] = useState(meeting?.title ?? '');
  const [starts, setStarts] = useState(localInput(meeting ? new Date(meeting.starts_at) : defaultStart));
  const [ends, setEnds] = useState(localInput(meeting ? new Date(meeting.ends_at) : new Date(defaultStart.getTime() + 3600_000)));
  const [location, setLocation] = useState(meeting?.location ?? '');
  const [description, setDescription] = useState(meeting?.description ?? '');
  const [status, setStatus] = useState<Meeting['status']>(meeting?.status ?? 'scheduled');
  const [attendees, setAttendees] = useState<Person[]>(meeting?.attendees ?? []);
  const [search, setSearch] = useState('');

  const saveLocked = lockedFor(t, 'meeting-save-why', lacking(myPermissions, [meeting ? 'meetings.update' : 'meetings.create']));
  const deleteLocked = lockedFor(t, 'meeting-delete-why', lacking(myPermissions, ['meetings.delete']));
  const searchLocked = lockedFor(t, 'meeting-people-why', lacking(myPermissions, ['users.list']));
  const found = useLoad(
    async () => (search.trim() && !searchLocked ? (await call(() => api.GET('/users', { params: { query: { search: search.trim(), status: 'active', limit: 8 } } }))).data : []),
    [search],
  );

  const { busy, error, submit } = useSubmit(() =>
    unlessStale(async () => {
      const body = {
        title,
        starts_at: new Date(starts).toISOString(),
        ends_at: new Date(ends).toISOString(),
        location: location.trim() ? location : null,
        description: description.trim() ? description : null,
        attendee_ids: attendees.map((p) => p.id),
        status,
      };
      if (meeting) await call(() => api.PATCH('/meetings/{id}', { params: { path: { id: meeting.id }, header: ifMatch(etag) }, body }));
      else await call(() => api.POST('/meetings', { body }));
      onDone(true);
    }, onStale),
  );
  const remove = useSubmit(() =>
    unlessStale(async () => {
      await call(() => api.DELETE('/meetings/{id}', { params: { path: { id: meeting!.id }, header: ifMatch(etag) } }));
      onDone(true);
    }, onStale),
  );

  return (
    <form onSubmit={submit} class="panel" aria-labelledby="meeting-form-title">
      <h2 id="meeting-form-title">{meeting ? t('meetings.editTitle', { title: meeting.title }) : t('meetings.createTitle')}</h2>
      <Field label={t('meetings.field.title')} id="meeting-title" required maxLength={200} value={title} onInput={(e: InputEvent) => setTitle((e.currentTarget as HTMLInputElement).value)} />
      <div class="filters">
        <Field label={t('meetings.field.starts')} id="meeting-starts" type="datetime-local" required value={starts} onInput={(e: InputEvent) => setStarts((e.currentTarget as HTMLInputElement).value)} />
        <Field label={t('meetings.field.ends')} id="meeting-ends" type="datetime-local" required value={ends} hint={t('meetings.endsHint')} onInput={(e: InputEvent) => setEnds((e.currentTarget as HTMLInputElement).value)} />
      </div>
      <Field label={t('meetings.field.location')} id="meeting-location" maxLength={200} value={location} onInput={(e: InputEvent) => setLocation((e.currentTarget as HTMLInputElement).value)} />
      <div class="field">
        <label for="meeting-description">{t('meetings.field.description')}</label>
        <textarea id="meeting-description" rows={3} maxLength={10000} value={description} onInput={(e) => setDescription((e.currentTarget as HTMLTextAreaElement).value)} />
      </div>
      {meeting && (
        <div class="field">
          <label for="meeting-status">{t('meetings.field.status')}</label>
          <select id="meeting-status" value={status} onChange={(e) => setStatus((e.currentTarget as HTMLSelectElement).value as Meeting['status'])}>
            <option value="scheduled">{t('meetings.status.scheduled')}</option>
            <option value="cancelled">{t('meetings.status.cancelled')}</option>
          </select>
        </div>
      )}
      <fieldset>
        <legend>{t('meetings.attendees')}</legend>
        <p class="hint">{meeting ? t('meetings.organizerAttends') : t('meetings.youAttend')}</p>
        <ul class="people-list">
          {attendees.map((person) => (
            <li key={person.id}>
              {personLabel(t, person, meeting?.organizer_id)}{' '}
              {person.id !== meeting?.organizer_id && (
                <button type="button" class="link" onClick={() => setAttendees(attendees.filter((p) => p.id !== person.id))}>
                  {t('meetings.remove', { name: person.label })}
                </button>
              )}
            </li>
          ))}
        </ul>
        <Field
          label={t('meetings.addPerson')}
          id="meeting-search"
          type="search"
          maxLength={100}
          value={search}
          disabled={searchLocked !== undefined}
          title={searchLocked?.title}
          aria-describedby={searchLocked?.describedBy}
          onInput={(e: InputEvent) => setSearch((e.currentTarget as HTMLInputElement).value)}
        />
        <Why locked={searchLocked} />
        {search.trim() && found.data && (
          <ul class="people-list" aria-label={t('meetings.found')}>
            {found.data
              .filter((user) => !attendees.some((p) => p.id === user.id))
              .map((user) => {
                const label = `${user.first_name} ${user.last_name}`;
                return (
                  <li key={user.id}>
                    <button type="button" class="secondary" onClick={() => (setAttendees([...attendees, { id: user.id, label, status: user.status }]), setSearch(''))}>
                      {t('meetings.add', { name: label })}
                    </button>{' '}
                    <span class="hint">{user.email}</span>
                  </li>
                );
              })}
          </ul>
        )}
        <ErrorMessage error={found.error} />
      </fieldset>
      <ErrorMessage error={error ?? remove.error} />
      <div class="actions">
        <button type="submit" disabled={busy || saveLocked !== undefined} title={saveLocked?.title} aria-describedby={saveLocked?.describedBy}>
          {busy ? t('common.saving') : meeting ? t('common.save') : t('meetings.plan')}
        </button>
        {meeting && (
          <button type="button" class="danger" disabled={remove.busy || deleteLocked !== undefined} title={deleteLocked?.title} aria-describedby={deleteLocked?.describedBy} onClick={(e) => void remove.submit(e)}>
            {t('meetings.delete')}
          </button>
        )}
        <button type="button" class="secondary" onClick={() => onDone(false)}>
          {t('common.cancel')}
        </button>
      </div>
      <Why locked={saveLocked} />
      {meeting && <Why locked={deleteLocked} />}
    </form>
  );
}

/** The page as the navigation opens it (its entry: meetings.entry.ts). */
export const Route = ({ id, me }: PageProps) => <MeetingsPage week={id} myPermissions={me.permissions} />;
