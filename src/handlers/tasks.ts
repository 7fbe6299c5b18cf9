// Handlers of the Tasks operations (and their French paths, /taches).
import type { Services } from '../services.js';
import type { Handler } from '../contract/handler-types.js';
import { presentTask as present } from '../tasks/presenter.js';
import { requireCaller } from '../auth/caller.js';

export function taskHandlers({ tasks }: Services) {
  const listTasks: Handler<'listTasks'> = async ({ query, principal }) => {
    const { page, nextCursor } = await tasks.list(requireCaller(principal), query ?? {});
    return { status: 200, body: { data: page.map(present), next_cursor: nextCursor } };
  };

  const getTask: Handler<'getTask'> = async ({ path }) => ({ status: 200, body: present(await tasks.get(path.id)) });

  const createTask: Handler<'createTask'> = async ({ body, principal, request }) => {
    const task = present(await tasks.create(requireCaller(principal), body, request));
    return { status: 201, body: task, headers: { Location: `/tasks/${task.id}` } };
  };

  const updateTask: Handler<'updateTask'> = async ({ body, path, principal, request }) => ({
    status: 200,
    body: present(await tasks.update(requireCaller(principal), path.id, body, request)),
  });

  const deleteTask: Handler<'deleteTask'> = async ({ path, principal, request }) => {
    await tasks.remove(requireCaller(principal), path.id, request);
    return { status: 204, body: undefined };
  };

  return {
    listTasks,
    getTask,
    createTask,
    updateTask,
    deleteTask,
    listTaches: listTasks,
    getTache: getTask,
    createTache: createTask,
    updateTache: updateTask,
    deleteTache: deleteTask,
  };
}
