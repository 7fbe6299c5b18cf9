// Handlers of the Roles operations.
import type { Services } from '../services.js';
import type { Handler } from '../contract/handler-types.js';
import { presentRole } from '../roles/presenter.js';
import { requireCaller } from '../auth/caller.js';

export function roleHandlers({ roles }: Services) {

  const listRoles: Handler<'listRoles'> = async () => ({ status: 200, body: { data: (await roles.list()).map(presentRole) } });

  const createRole: Handler<'createRole'> = async ({ body, principal, request }) => ({
    status: 201,
    body: presentRole(await roles.create(requireCaller(principal), body, request)),
  });

  const updateRole: Handler<'updateRole'> = async ({ body, path, principal, request }) => ({
    status: 200,
    body: presentRole(await roles.update(requireCaller(principal), path.id, body, request)),
  });

  const deleteRole: Handler<'deleteRole'> = async ({ path, principal, request }) => {
    await roles.remove(requireCaller(principal), path.id, request);
    return { status: 204, body: undefined };
  };

  return { listRoles, createRole, updateRole, deleteRole };
}
