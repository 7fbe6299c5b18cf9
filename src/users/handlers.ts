// Handlers of the Users operations.
import type { PlatformServices } from '../services.js';
import type { Handler } from '../http/handler-types.js';
import { presentUser as present } from './presenter.js';
import type { ShownUser } from './repository.js';
import { requireCaller } from '../auth/caller.js';
import { revisionOf } from '../http/entity-tags.js';

/** One user, with its revision (the router answers it as the ETag). */
const shown = <S extends 200 | 201>(status: S, user: ShownUser) => ({ status, body: present(user), revision: revisionOf(user.id, user.revision) });

export function userHandlers({ users, idempotency }: Pick<PlatformServices, 'users' | 'idempotency'>) {

  const listUsers: Handler<'listUsers'> = async ({ query }) => {
    const { page, nextCursor } = await users.list(query);
    return { status: 200, body: { data: page.map(present), next_cursor: nextCursor } };
  };

  const getUser: Handler<'getUser'> = async ({ path }) => shown(200, await users.get(path.id));

  const createUser: Handler<'createUser'> = ({ body, principal, request, idempotency: key }) =>
    idempotency.once(key, (seal) => users.create(requireCaller(principal), body, request, seal), (user: ShownUser) => shown(201, user));

  const updateUser: Handler<'updateUser'> = async ({ body, path, principal, request, precondition }) =>
    shown(200, await users.update(requireCaller(principal), path.id, body, request, precondition));

  const disableUser: Handler<'disableUser'> = async ({ path, principal, request, precondition }) =>
    shown(200, await users.disable(requireCaller(principal), path.id, request, precondition));

  return { listUsers, getUser, createUser, updateUser, disableUser };
}
