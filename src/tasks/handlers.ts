// Handlers of the Tasks operations (and their French paths, /taches).
import type { PlatformServices } from '../services.js';
import type { TaskService } from './service.js';
import type { Handler } from '../http/handler-types.js';
import { presentTask as present } from './presenter.js';
import type { ShownTask } from './repository.js';
import { requireCaller } from '../auth/caller.js';
import { revisionOf } from '../http/entity-tags.js';

/** One task, with its revision (the router answers it as the ETag). */
const shown = (task: ShownTask) => ({ status: 200 as const, body: present(task), revision: revisionOf(task.id, task.revision) });

export function taskHandlers({ tasks, idempotency }: { tasks: TaskService } & Pick<PlatformServices, 'idempotency'>) {
  const listTasks: Handler<'listTasks'> = async ({ query, principal }) => {
    const { page, nextCursor } = await tasks.list(requireCaller(principal), query);
    return { status: 200, body: { data: page.map(present), next_cursor: nextCursor } };
  };

  const getTask: Handler<'getTask'> = async ({ path }) => shown(await tasks.get(path.id));

  const createTask: Handler<'createTask'> = ({ body, principal, request, idempotency: key }) =>
    idempotency.once(
      key,
      (trx) => tasks.create(trx, requireCaller(principal), body, request),
      ({ task, revision }) => ({ status: 201 as const, body: task, headers: { Location: `/tasks/${task.id}` }, revision: revisionOf(task.id, revision) }),
    );

  const updateTask: Handler<'updateTask'> = async ({ body, path, principal, request, precondition }) =>
    shown(await tasks.update(requireCaller(principal), path.id, body, request, precondition));

  const deleteTask: Handler<'deleteTask'> = async ({ path, principal, request, precondition }) => {
    await tasks.delete(requireCaller(principal), path.id, request, precondition);
    return { status: 204, body: undefined };
  };

  return {
    listTasks,
    getTask,
    createTask,
    updateTask,
    deleteTask,
  };
}
