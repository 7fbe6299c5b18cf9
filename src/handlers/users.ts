// Handlers of the Users operations.
import type { Dependencies } from '../dependencies.js';
import type { Handler } from '../contract/handler-types.js';
import { listUsersPage } from '../users/repository.js';
import { presentUser } from '../users/presenter.js';

export function userHandlers({ db }: Dependencies) {
  const listUsers: Handler<'listUsers'> = async () => {
    const rows = await listUsersPage(db, 50);
    return { status: 200, body: { data: rows.map((row) => presentUser(row, [])), next_cursor: null } };
  };
  return { listUsers, listUtilisateurs: listUsers };
}
