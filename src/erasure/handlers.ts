// Handlers of erasure (POST /users/{id}/erasure, /utilisateurs/{id}/effacement).
import type { ErasureService } from './service.js';
import type { Handler } from '../http/handler-types.js';
import { presentUser } from '../users/presenter.js';
import { requireCaller } from '../auth/caller.js';

export function erasureHandlers({ erasure }: { erasure: ErasureService }) {
  const eraseUser: Handler<'eraseUser'> = async ({ path, principal, request }) => {
    const { user } = await erasure.erase(requireCaller(principal), path.id, request);
    return { status: 200, body: presentUser(user) };
  };
  return { eraseUser };
}
