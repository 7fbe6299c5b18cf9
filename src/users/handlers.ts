// Handlers of the Users operations.
import type { PlatformServices } from '../services.js';
import type { Handler } from '../http/handler-types.js';
import { presentUser as present } from './presenter.js';
import type { ShownUser } from './repository.js';
import { requireCaller } from '../auth/caller.js';
import { revisionOf } from '../http/entity-tags.js';

/** One user, with its revision (the router answers it as the ETag). */
const shown = (user: ShownUser) => ({ status: 200 as const, body: present(user), revision: revisionOf(user.id, user.revision) });

export function userHandlers({ users, idempotency }: Pick<PlatformServices, 'users' | 'idempotency'>) {

  const listUsers: Handler<'listUsers'> = async ({ query }) => {
    const { page, nextCursor } = await users.list(query);
    return { status: 200, body: { data: page.map(present), next_cursor: nextCursor } };
  };

  const getUser: Handler<'getUser'> = async ({ path }) => shown(await users.get(path.id));

  const createUser: Handler<'createUser'> = ({ body, principal, request, idempotency: key }) =>
    idempotency.onceDrafted(
      key,
      () => users.draft(body),
      (trx, draft) => users.create(trx, requireCaller(principal), draft, request),
      ({ user, revision }) => ({ status: 201 as const, body: user, revision: revisionOf(user.id, revision) }),
    );

  const updateUser: Handler<'updateUser'> = async ({ body, path, principal, request, precondition }) =>
    shown(await users.update(requireCaller(principal), path.id, body, request, precondition));

  const disableUser: Handler<'disableUser'> = async ({ path, principal, request, precondition }) =>
    shown(await users.disable(requireCaller(principal), path.id, request, precondition));

  return { listUsers, getUser, createUser, updateUser, disableUser };
}
