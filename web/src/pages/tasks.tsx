// Tasks: a paged list (cursor) with the API's filters (status, assignee, due range, title search,
// order), each task's status changed in place, create and edit, delete. The permission alone
// decides (docs/AUTH.md, "Tasks"): a control whose permission the person lacks (tasks.create,
// tasks.update, tasks.delete) is shown disabled, with why (web/src/authority.ts).
import type { PageProps } from '../page-entry.js';
import { useState } from 'preact/hooks';
import { api, call, callTagged, ifMatch } from '../api/client.js';
import { TaggedEditor, unlessStale, type EditOutcome } from '../tagged-editor.js';
import type { components, operations } from '../../../generated/openapi.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { useLoad, useSubmit } from '../load.js';
import { href, navigate } from '../router.js';
import { ErrorMessage, Field, ListState, PageTitle, Why, lockedFor, type Locked, Pager, useCursorPages, TableScroll } from '../ui.js';
import { lacking } from '../authority.js';

type Task = components['schemas']['Task'];
type Status = components['schemas']['TaskStatus'];
type Priority = components['schemas']['TaskPriority'];
type Query = NonNullable<operations['listTasks']['parameters']['query']>;
type Me = components['schemas']['Me'];

const STATUSES: Status[] = ['todo', 'in_progress', 'done', 'cancelled'];
const PRIORITIES: Priority[] = ['low', 'normal', 'high', 'urgent'];
const PAGE_SIZE = 20;
/** The status filter is one comma-separated parameter (`status=todo,done`), as the contract says. */
const COMMA_SEPARATED = { array: { style: 'form', explode: false } } as const;

/** A datetime-local value (the browser's time zone) as an ISO instant; empty stays unset. */
const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);
/** An ISO instant as a datetime-local value in the browser's time zone. */
function localInput(iso: string | null): string {
  if (!iso) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

export function TasksPage({ taskId, me }: { taskId?: string | undefined; me: Me }) {
  if (taskId === 'new') return <CreateTask me={me} />;
  if (taskId) return <EditTask id={taskId} me={me} />;
  return <TaskList me={me} />;
}

function TaskList({ me }: { me: Me }) {
  const { t, formatDate } = useI18n();
  const [form, setForm] = useState({ search: '', statuses: [] as Status[], mine: false, dueAfter: '', dueBefore: '', sort: 'created_at' as Query['sort'] });
  const [filters, setFilters] = useState<Query>({});
  const pages = useCursorPages();
  const { cursor } = pages;
  const page = useLoad(
    () => call(() => api.GET('/tasks', { params: { query: { ...filters, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } }, querySerializer: COMMA_SEPARATED })),
    [filters, cursor],
  );
  const updateLocked = lockedFor(t, 'task-update-why', lacking(me.permissions, ['tasks.update']));
  const createLocked = lacking(me.permissions, ['tasks.create']);

  const apply = (event: Event) => {
    event.preventDefault();
    const dueAfter = instant(form.dueAfter);
    const dueBefore = instant(form.dueBefore);
    setFilters({
      ...(form.search.trim() ? { search: form.search.trim() } : {}),
      ...(form.statuses.length ? { status: form.statuses } : {}),
      ...(form.mine ? { assignee_id: 'me' } : {}),
      ...(dueAfter ? { due_after: dueAfter } : {}),
      ...(dueBefore ? { due_before: dueBefore } : {}),
      ...(form.sort === 'due_at' ? { sort: 'due_at' as const } : {}),
    });
    pages.restart();
  };
  const toggleStatus = (status: Status, on: boolean) => setForm({ ...form, statuses: on ? [...form.statuses, status] : form.statuses.filter((s) => s !== status) });

  return (
    <>
      <PageTitle>{t('tasks.title')}</PageTitle>
      <div class="toolbar">
        <form class="filters" role="search" onSubmit={apply} aria-label={t('tasks.filters')}>
          <Field label={t('tasks.search')} id="task-search" type="search" value={form.search} onInput={(e: InputEvent) => setForm({ ...form, search: (e.currentTarget as HTMLInputElement).value })} />
          <fieldset class="group">
            <legend>{t('tasks.status')}</legend>
            <div class="checks">
              {STATUSES.map((status) => (
                <label key={status}>
                  <input type="checkbox" checked={form.statuses.includes(status)} onChange={(e) => toggleStatus(status, (e.currentTarget as HTMLInputElement).checked)} />
                  {t(`tasks.status.${status}`)}
                </label>
              ))}
            </div>
          </fieldset>
          <div class="checks">
            <label>
              <input type="checkbox" id="task-mine" checked={form.mine} onChange={(e) => setForm({ ...form, mine: (e.currentTarget as HTMLInputElement).checked })} />
              {t('tasks.mine')}
            </label>
          </div>
          <Field label={t('tasks.dueAfter')} id="task-due-after" type="datetime-local" value={form.dueAfter} onInput={(e: InputEvent) => setForm({ ...form, dueAfter: (e.currentTarget as HTMLInputElement).value })} />
          <Field label={t('tasks.dueBefore')} id="task-due-before" type="datetime-local" value={form.dueBefore} onInput={(e: InputEvent) => setForm({ ...form, dueBefore: (e.currentTarget as HTMLInputElement).value })} />
          <div class="field">
            <label for="task-sort">{t('tasks.sort')}</label>
            <select id="task-sort" value={form.sort} onChange={(e) => setForm({ ...form, sort: (e.currentTarget as HTMLSelectElement).value as Query['sort'] })}>
              <option value="created_at">{t('tasks.sort.created_at')}</option>
              <option value="due_at">{t('tasks.sort.due_at')}</option>
            </select>
          </div>
          <button type="submit">{t('tasks.filter')}</button>
        </form>
        {createLocked.length === 0 ? <a href={href('tasks', 'new')}>{t('tasks.new')}</a> : <span class="hint">{t('authority.needs', { permissions: createLocked.join(', ') })}</span>}
      </div>
      <ListState loaded={page} empty={t('tasks.empty')}>
        {(items) => (
          <>
            <TableScroll>
              <table aria-busy={page.loading}>
                <thead>
                  <tr>
                    <th scope="col">{t('tasks.taskTitle')}</th>
                    <th scope="col">{t('tasks.status')}</th>
                    <th scope="col">{t('tasks.priority')}</th>
                    <th scope="col">{t('tasks.due')}</th>
                    <th scope="col">{t('tasks.assignee')}</th>
                    <th scope="col">{t('tasks.createdBy')}</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((task) => (
                    <tr key={task.id} data-task-id={task.id}>
                      <td>
                        <a href={href('tasks', task.id)}>{task.title}</a>
                      </td>
                      <td>
                        <StatusInPlace task={task} locked={updateLocked} onChanged={page.reload} />
                      </td>
                      <td>{t(`tasks.priority.${task.priority}`)}</td>
                      <td>{task.due_at ? formatDate(task.due_at) : t('tasks.noDue')}</td>
                      <td>
                        <Assignee task={task} />
                      </td>
                      <td>{task.created_by.label}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <Why locked={updateLocked} />
            <Pager label={t('tasks.pages')} previous={pages.previous} next={pages.next(page.data?.next_cursor)} number={pages.number} loading={page.loading} />
          </>
        )}
      </ListState>
    </>
  );
}

function Assignee({ task }: { task: Task }) {
  const { t } = useI18n();
  if (!task.assignee) return <>{t('tasks.unassigned')}</>;
  return (
    <>
      {task.assignee.label}
      {task.assignee.status === 'disabled' && <span class="badge bad"> {t('users.status.disabled')}</span>}
    </>
  );
}

/** The task's status as a select that saves on change (PATCH), disabled with why without tasks.update. */
function StatusInPlace({ task, locked, onChanged }: { task: Task; locked: Locked | undefined; onChanged: () => void }) {
  const { t } = useI18n();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // The status just saved: "Saved." once the list, read again, shows the task with it.
  const [saved, setSaved] = useState<Status | null>(null);
  const change = async (status: Status) => {
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      await call(() => api.PATCH('/tasks/{id}', { params: { path: { id: task.id } }, body: { status } }));
      setSaved(status);
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <select
        aria-label={t('tasks.statusOf', { title: task.title })}
        value={task.status}
        disabled={busy || locked !== undefined}
        title={locked?.title}
        aria-describedby={locked?.describedBy}
        onChange={(e) => void change((e.currentTarget as HTMLSelectElement).value as Status)}
      >
        {STATUSES.map((status) => (
          <option key={status} value={status}>
            {t(`tasks.status.${status}`)}
          </option>
        ))}
      </select>
      <span role="status" class="hint">
        {saved !== null && saved === task.status ? ` ${t('common.saved')}` : ''}
      </span>
      <ErrorMessage error={error} />
    </>
  );
}

interface FormValues {
  title: string;
  description: string;
  status: Status;
  priority: Priority;
  due: string;
  assignee: string;
}

/**
 * The assignee: a choice among active users when the person may list users (users.list), plus
 * themselves; otherwise themselves or nobody (the server checks the user is active).
 */
function AssigneeInput({ me, value, current, onChange }: { me: Me; value: string; current: Task['assignee']; onChange: (id: string) => void }) {
  const { t } = useI18n();
  const canList = me.permissions.includes('users.list');
  const users = useLoad(() => (canList ? call(() => api.GET('/users', { params: { query: { status: 'active', limit: 200 } } })) : Promise.resolve(undefined)), [canList]);
  const options = new Map<string, string>([[me.user.id, t('tasks.me', { name: `${me.user.first_name} ${me.user.last_name}` })]]);
  if (current) options.set(current.id, current.label);
  for (const user of users.data?.data ?? []) if (!options.has(user.id)) options.set(user.id, `${user.first_name} ${user.last_name}`);
  return (
    <div class="field">
      <label for="task-assignee">{t('tasks.assignee')}</label>
      <select id="task-assignee" value={value} onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value)}>
        <option value="">{t('tasks.unassigned')}</option>
        {[...options].map(([id, label]) => (
          <option key={id} value={id}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
}

function TaskFields({ me, values, current, onChange }: { me: Me; values: FormValues; current: Task['assignee']; onChange: (values: FormValues) => void }) {
  const { t } = useI18n();
  const set = (field: keyof FormValues) => (e: Event) => onChange({ ...values, [field]: (e.currentTarget as HTMLInputElement).value });
  return (
    <>
      <Field label={t('tasks.taskTitle')} id="task-title" required maxLength={200} value={values.title} onInput={set('title')} />
      <div class="field">
        <label for="task-description">{t('tasks.description')}</label>
        <textarea id="task-description" rows={4} maxLength={10_000} value={values.description} onInput={set('description')} />
      </div>
      <Choice id="task-status" label={t('tasks.status')} value={values.status} options={STATUSES} prefix="tasks.status" onChange={set('status')} />
      <Choice id="task-priority" label={t('tasks.priority')} value={values.priority} options={PRIORITIES} prefix="tasks.priority" onChange={set('priority')} />
      <Field label={t('tasks.due')} id="task-due" type="datetime-local" value={values.due} onInput={set('due')} />
      <AssigneeInput me={me} value={values.assignee} current={current} onChange={(assignee) => onChange({ ...values, assignee })} />
    </>
  );
}

function Choice({ id, label, value, options, prefix, onChange }: { id: string; label: string; value: string; options: readonly string[]; prefix: 'tasks.status' | 'tasks.priority'; onChange: (e: Event) => void }) {
  const { t } = useI18n();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={onChange}>
        {options.map((option) => (
          <option key={option} value={option}>
            {t(`${prefix}.${option}` as MessageKey)}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The form's values as the API takes them: empty optional fields are null (cleared). */
const body = (values: FormValues) => ({
  title: values.title,
  description: values.description.trim() ? values.description : null,
  status: values.status,
  priority: values.priority,
  due_at: instant(values.due) ?? null,
  assignee_id: values.assignee || null,
});

function CreateTask({ me }: { me: Me }) {
  const { t } = useI18n();
  const [values, setValues] = useState<FormValues>({ title: '', description: '', status: 'todo', priority: 'normal', due: '', assignee: '' });
  const createLocked = lockedFor(t, 'task-create-why', lacking(me.permissions, ['tasks.create']));
  const { busy, error, submit } = useSubmit(async () => {
    const created = await call(() => api.POST('/tasks', { body: body(values) }));
    // Without tasks.read the new task cannot be opened: back to the list.
    navigate(...(me.permissions.includes('tasks.read') ? ['tasks', created.id] : ['tasks']));
  });
  return (
    <>
      <PageTitle>{t('tasks.createTitle')}</PageTitle>
      <form onSubmit={submit} class="narrow">
        <TaskFields me={me} values={values} current={null} onChange={setValues} />
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="submit" disabled={busy || createLocked !== undefined} title={createLocked?.title} aria-describedby={createLocked?.describedBy}>
            {busy ? t('common.saving') : t('common.create')}
          </button>
          <a href={href('tasks')}>{t('common.cancel')}</a>
        </div>
        <Why locked={createLocked} />
      </form>
    </>
  );
}

function EditTask({ id, me }: { id: string; me: Me }) {
  return (
    <TaggedEditor load={() => callTagged(() => api.GET('/tasks/{id}', { params: { path: { id } } }))} deps={[id]}>
      {(task, done) => <EditTaskForm task={task.data} etag={task.etag} me={me} onDone={done} />}
    </TaggedEditor>
  );
}

function EditTaskForm({ task, etag, me, onDone }: { task: Task; etag: string; me: Me; onDone: (outcome: EditOutcome) => void }) {
  const { t, formatDate } = useI18n();
  const [values, setValues] = useState<FormValues>({
    title: task.title,
    description: task.description ?? '',
    status: task.status,
    priority: task.priority,
    due: localInput(task.due_at),
    assignee: task.assignee_id ?? '',
  });
  const saveLocked = lockedFor(t, 'task-save-why', lacking(me.permissions, ['tasks.update']));
  const deleteLocked = lockedFor(t, 'task-delete-why', lacking(me.permissions, ['tasks.delete']));
  const save = useSubmit(() =>
    unlessStale(async () => {
      await call(() => api.PATCH('/tasks/{id}', { params: { path: { id: task.id }, header: ifMatch(etag) }, body: body(values) }));
      onDone('saved');
    }, onDone),
  );
  const remove = useSubmit(() =>
    unlessStale(async () => {
      if (!window.confirm(t('tasks.deleteConfirm', { title: task.title }))) return;
      await call(() => api.DELETE('/tasks/{id}', { params: { path: { id: task.id }, header: ifMatch(etag) } }));
      navigate('tasks');
    }, onDone),
  );
  return (
    <>
      <PageTitle>{task.title}</PageTitle>
      <p>
        <a href={href('tasks')}>{t('tasks.back')}</a>
      </p>
      <p class="hint">
        {t('tasks.createdByAt', { who: task.created_by.label, when: formatDate(task.created_at) })}
        {task.completed_at && ` · ${t('tasks.completedAt', { when: formatDate(task.completed_at) })}`}
      </p>
      <form onSubmit={save.submit} class="narrow">
        <TaskFields me={me} values={values} current={task.assignee} onChange={setValues} />
        <ErrorMessage error={save.error ?? remove.error} />
        <div class="actions">
          <button type="submit" disabled={save.busy || saveLocked !== undefined} title={saveLocked?.title} aria-describedby={saveLocked?.describedBy}>
            {save.busy ? t('common.saving') : t('common.save')}
          </button>
          <button type="button" class="danger" disabled={remove.busy || deleteLocked !== undefined} title={deleteLocked?.title} aria-describedby={deleteLocked?.describedBy} onClick={(e) => void remove.submit(e)}>
            {t('tasks.delete')}
          </button>
        </div>
        <Why locked={saveLocked} />
        <Why locked={deleteLocked} />
      </form>
    </>
  );
}

/** The page as the navigation opens it (its entry: tasks.entry.ts). */
export const Route = ({ id, me }: PageProps) => <TasksPage taskId={id} me={me} />;
