// Handlers of erasure (POST /users/{id}/erasure, /utilisateurs/{id}/effacement).
import type { erasureService } from './service.js';
import type { Handler } from '../http/handler-types.js';
import { presentUser } from '../users/presenter.js';
import { requireCaller } from '../auth/caller.js';

export function erasureHandlers({ erasure }: { erasure: ReturnType<typeof erasureService> }) {
  const eraseUser: Handler<'eraseUser'> = async ({ path, principal, request }) => {
    const { user } = await erasure.erase(requireCaller(principal), path.id, request);
    return { status: 200, body: presentUser(user) };
  };
  return { eraseUser };
}
