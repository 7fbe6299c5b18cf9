// Handlers of the Users operations.
import type { Services } from '../services.js';
import type { Handler } from '../contract/handler-types.js';
import { presentUser as present } from '../users/presenter.js';
import { requireCaller } from '../auth/caller.js';

export function userHandlers({ users }: Services) {

  const listUsers: Handler<'listUsers'> = async ({ query }) => {
    const { page, nextCursor } = await users.list(query ?? {});
    return { status: 200, body: { data: page.map(present), next_cursor: nextCursor } };
  };

  const getUser: Handler<'getUser'> = async ({ path }) => ({ status: 200, body: present(await users.get(path.id)) });

  const createUser: Handler<'createUser'> = async ({ body, principal, request }) => ({
    status: 201,
    body: present(await users.create(requireCaller(principal), body, request)),
  });

  const updateUser: Handler<'updateUser'> = async ({ body, path, principal, request }) => ({
    status: 200,
    body: present(await users.update(requireCaller(principal), path.id, body, request)),
  });

  const disableUser: Handler<'disableUser'> = async ({ path, principal, request }) => ({
    status: 200,
    body: present(await users.disable(requireCaller(principal), path.id, request)),
  });

  return { listUsers, listUtilisateurs: listUsers, getUser, createUser, updateUser, disableUser };
}
