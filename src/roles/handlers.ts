// Handlers of the Roles operations.
import type { PlatformServices } from '../services.js';
import type { Handler } from '../http/handler-types.js';
import { presentRole } from './presenter.js';
import type { RoleRow } from './repository.js';
import { roleRevision } from './repository.js';
import { requireCaller } from '../auth/caller.js';
import { revisionOf } from '../http/entity-tags.js';

/** One role, with its revision (the router answers it as the ETag). */
const shown = <S extends 200 | 201>(status: S, role: RoleRow) => ({ status, body: presentRole(role), revision: revisionOf(role.id, roleRevision(role)) });

export function roleHandlers({ roles, idempotency }: Pick<PlatformServices, 'roles' | 'idempotency'>) {

  const listRoles: Handler<'listRoles'> = async () => ({ status: 200, body: { data: (await roles.list()).map(presentRole) } });

  const getRole: Handler<'getRole'> = async ({ path }) => shown(200, await roles.get(path.id));

  const createRole: Handler<'createRole'> = ({ body, principal, request, idempotency: key }) =>
    idempotency.once(key, (trx) => roles.create(trx, requireCaller(principal), body, request), (role) => shown(201, role));

  const updateRole: Handler<'updateRole'> = async ({ body, path, principal, request, precondition }) =>
    shown(200, await roles.update(requireCaller(principal), path.id, body, request, precondition));

  const deleteRole: Handler<'deleteRole'> = async ({ path, principal, request, precondition }) => {
    await roles.delete(requireCaller(principal), path.id, request, precondition);
    return { status: 204, body: undefined };
  };

  return { listRoles, getRole, createRole, updateRole, deleteRole };
}
