// Handler of the permission catalogue.
import type { Handler } from '../http/handler-types.js';
import { PERMISSIONS } from '../auth/permissions.js';

export function permissionHandlers() {
  const listPermissions: Handler<'listPermissions'> = async () => ({ status: 200, body: { data: [...PERMISSIONS] } });
  return { listPermissions };
}
