// Managing tasks. Who may do what is the operation's permission alone, checked by the HTTP edge
// before the service runs (docs/AUTH.md, "Tasks"): being a task's assignee or creator gives no
// right of its own, and every holder of tasks.read / tasks.list sees every task. Each change is
// written with its audit event in one transaction, on the task's row locked FOR UPDATE.
import type { Kysely } from 'kysely';
import type { components, operations } from '../../generated/openapi.js';
import type { Database } from '../db/schema.js';
import type { ServiceDeps } from '../dependencies.js';
import type { Principal } from '../auth/principal.js';
import { personFilter } from '../auth/caller.js';
import { DomainError, fieldError } from '../errors.js';
import { cleanName, cleanText } from '../text/normalize.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { auditContext, type Origin } from '../audit/context.js';
import { changesBetween } from '../audit/changes.js';
import { serviceSecret } from '../auth/secrets/service-secrets.js';
import { resourceId } from '../uuid.js';
import { instantText, parseInstant } from '../instant.js';
import * as tasks from './repository.js';
import { lockUserStatuses } from '../users/repository.js';
import { keysetPage } from '../pagination/keyset-page.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { assertPrecondition, type Precondition } from '../revisions/precondition.js';
import { presentTask, type TaskResource } from './presenter.js';

export const DEFAULT_PAGE_SIZE = 50;
export const TITLE_MAX_LENGTH = 200;
export const DESCRIPTION_MAX_LENGTH = 10_000;

const notFound = () => new DomainError('not_found', 'not_found', 'No task has this id.');

const invalidAssignee = () => fieldError('body', 'assignee_id', 'is not an active user', 'invalid_assignee', 'invalid_assignee');

type CreateInput = components['schemas']['TaskCreateRequest'];
type UpdateInput = components['schemas']['TaskUpdateRequest'];
type ListQuery = NonNullable<operations['listTasks']['parameters']['query']>;

const cleanTitle = (title: string) => cleanName(title, { location: 'request/body/title', maxLength: TITLE_MAX_LENGTH });
/** A blank description is no description. */
const cleanDescription = (description: string | null) =>
  description === null ? null : cleanText(description, { location: 'request/body/description', maxLength: DESCRIPTION_MAX_LENGTH }) || null;
/** A due date as the API prints it (UTC, milliseconds), so that before/after compare equal values. */
const dueTime = (value: string | null) => (value === null ? null : parseInstant(value, 'request/body/due_at').toISOString());
/** A due-date filter as the instant it names, in UTC to the microsecond sent (instantText). */
const dueFilter = (value: string | undefined, name: 'due_before' | 'due_after') => (value === undefined ? undefined : instantText(value, `request/query/${name}`));
/** A user's id as the database prints it (lower case): the same person sent in capitals is no change to record. */
const lowerId = (value: string | null | undefined) => (typeof value === 'string' ? value.toLowerCase() : value);

/** The fields an audit event shows before/after. */
const auditedFields = (task: tasks.TaskFields & { completed_at: string | null }) => ({
  title: task.title,
  description: task.description,
  status: task.status,
  priority: task.priority,
  due_at: task.due_at,
  assignee_id: task.assignee_id,
  completed_at: task.completed_at,
});

export class TaskService {
  private readonly db: ServiceDeps['db'];
  private readonly clock: ServiceDeps['clock'];
  private readonly cursorKey: ReturnType<typeof serviceSecret>;

  constructor({ db, clock }: ServiceDeps) {
    this.db = db;
    this.clock = clock;
    this.cursorKey = serviceSecret(db, clock, 'cursor_signing');
  }

  /** Anything that is not a task's id (malformed, or another resource's) is not found, like an unknown one. */
  async get(id: string) {
    const known = resourceId(id);
    const task = known && (await tasks.findListedTask(this.db, known));
    if (!task) throw notFound();
    return task;
  }

  /** Assigning needs an active user, its row locked FOR SHARE until the transaction ends (lockUserStatuses). */
  private async assertAssignable(trx: Kysely<Database>, assigneeId: string | null): Promise<void> {
    if (assigneeId !== null && (await lockUserStatuses(trx, [assigneeId])).get(assigneeId) !== 'active') throw invalidAssignee();
  }

  private creatorOf(caller: Principal) {
    return caller.kind === 'user' ? { created_by_user_id: caller.userId, created_by_api_key_id: null } : { created_by_user_id: null, created_by_api_key_id: caller.apiKeyId };
  }

  async list(caller: Principal, query: ListQuery) {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const sort = query.sort ?? 'created_at';
    const assigneeId = personFilter(caller, 'assignee_id', query.assignee_id);
    const filter: tasks.TaskFilter = { statuses: query.status, assigneeId, dueBefore: dueFilter(query.due_before, 'due_before'), dueAfter: dueFilter(query.due_after, 'due_after'), search: query.search };
    const scope = { sort, ...filter };
    const after = query.cursor === undefined ? undefined : decodeCursor(await this.cursorKey(), query.cursor, scope);
    const rows = await tasks.listTasksPage(this.db, { limit, sort, after, filter });
    return keysetPage(rows, limit, async (last) => encodeCursor(await this.cursorKey(), { key: last.cursor_key, id: last.id }, scope));
  }

  /**
   * Made in the transaction it is given, which its caller opened and ends (a request's edge, a
   * command line): the task as its public event and the answer show it, with its revision.
   */
  async create(trx: Kysely<Database>, caller: Principal, input: CreateInput, origin: Origin): Promise<{ task: TaskResource; revision: string }> {
    const fields: tasks.TaskFields = {
      title: cleanTitle(input.title),
      description: cleanDescription(input.description ?? null),
      status: input.status ?? 'todo',
      priority: input.priority ?? 'normal',
      due_at: dueTime(input.due_at ?? null),
      assignee_id: lowerId(input.assignee_id) ?? null,
    };
    await this.assertAssignable(trx, fields.assignee_id);
    const now = this.clock.now();
    const completedAt = fields.status === 'done' ? now : null;
    const taskId = await tasks.insertTask(trx, { ...fields, ...this.creatorOf(caller), completed_at: completedAt, now });
    // Read in the transaction: the event shows it, the answer too.
    const created = (await tasks.findListedTask(trx, taskId))!;
    const task = presentTask(created);
    await recordAuditEvent(trx, {
      type: 'task_created',
      at: now,
      context: auditContext(caller, origin),
      target: { type: 'task', id: taskId, label: fields.title },
      changes: { before: null, after: auditedFields({ ...fields, completed_at: completedAt?.toISOString() ?? null }) },
      publish: { data: task },
    });
    return { task, revision: created.revision };
  }

  async update(caller: Principal, id: string, input: UpdateInput, origin: Origin, precondition?: Precondition) {
    const wanted: Partial<tasks.TaskFields> = {
      title: input.title === undefined ? undefined : cleanTitle(input.title),
      description: input.description === undefined ? undefined : cleanDescription(input.description),
      status: input.status,
      priority: input.priority,
      due_at: input.due_at === undefined ? undefined : dueTime(input.due_at),
      assignee_id: lowerId(input.assignee_id),
    };
    const known = resourceId(id);
    if (!known) throw notFound();
    return this.db.transaction().execute(async (trx) => {
      const task = await tasks.lockTask(trx, known);
      if (!task) throw notFound();
      if (precondition) assertPrecondition(precondition, (await tasks.findTaskRevision(trx, known))!);
      // Assigning needs an active user; a task may keep an assignee disabled since.
      if (wanted.assignee_id !== undefined && wanted.assignee_id !== task.assignee_id) await this.assertAssignable(trx, wanted.assignee_id);
      const now = this.clock.now();
      const status = wanted.status ?? task.status;
      // Set when the task becomes done, cleared when it leaves done, kept otherwise.
      const completedAt = status !== 'done' ? null : task.status === 'done' ? task.completed_at : now.toISOString();
      const changes = changesBetween(auditedFields(task), { ...wanted, completed_at: completedAt });
      if (!changes) return (await tasks.findListedTask(trx, known))!; // nothing changes: nothing written, nothing recorded
      const completion = completedAt === task.completed_at ? {} : { completed_at: completedAt === null ? null : now };
      await tasks.updateTaskFields(trx, known, { ...wanted, ...completion, now });
      const updated = (await tasks.findListedTask(trx, known))!;
      await recordAuditEvent(trx, {
        type: 'task_updated',
        at: now,
        context: auditContext(caller, origin),
        target: { type: 'task', id: known, label: updated.title },
        changes,
        publish: { data: presentTask(updated) },
      });
      return updated;
    });
  }

  async delete(caller: Principal, id: string, origin: Origin, precondition?: Precondition): Promise<void> {
    const known = resourceId(id);
    if (!known) throw notFound();
    await this.db.transaction().execute(async (trx) => {
      const task = await tasks.lockTask(trx, known);
      if (!task) throw notFound();
      if (precondition) assertPrecondition(precondition, (await tasks.findTaskRevision(trx, known))!);
      const shown = (await tasks.findListedTask(trx, known))!;
      await tasks.deleteTask(trx, known);
      await recordAuditEvent(trx, {
        type: 'task_deleted',
        at: this.clock.now(),
        context: auditContext(caller, origin),
        target: { type: 'task', id: known, label: task.title },
        changes: { before: auditedFields(task), after: null },
        publish: { data: presentTask(shown) },
      });
    });
  }
}
