// The cursor of GET /tasks: the sort key and id of the last task of a page, signed for the order
// and the filters of the query (src/pagination/signed-cursor.ts). The key travels as PostgreSQL
// prints it, to the microsecond (a JS Date would round it to the millisecond and skip or repeat
// tasks), or as `infinity` for a task without a due date in the due-date order.
import { invalidCursor, openCursor, sealCursor } from '../pagination/signed-cursor.js';
import { UUID } from '../uuid.js';
import { ISO_MICROS } from '../db/iso-time.js';

export type TaskSort = 'created_at' | 'due_at';

export interface TaskCursor {
  key: string;
  id: string;
}

/** The order and the filters a cursor is bound to, as the query compares them. */
export interface CursorScope {
  sort: TaskSort;
  statuses?: readonly string[] | undefined;
  assigneeId?: string | undefined;
  dueBefore?: string | undefined;
  dueAfter?: string | undefined;
  search?: string | undefined;
}

/**
 * The list, its order, then the filters. Statuses are a set (sorted); an assignee is the user's id
 * (`me` resolved first, so one person's cursor is not another's); times as they were written.
 */
const scopeOf = (scope: CursorScope) => [
  'tasks',
  `${scope.sort},id`,
  scope.statuses ? [...scope.statuses].sort() : null,
  scope.assigneeId?.toLowerCase() ?? null,
  scope.dueBefore ?? null,
  scope.dueAfter ?? null,
  scope.search ?? null,
];

export function encodeCursor(key: Buffer, cursor: TaskCursor, scope: CursorScope): string {
  return sealCursor(key, { k: cursor.key, i: cursor.id }, scopeOf(scope));
}

export function decodeCursor(key: Buffer, value: string, scope: CursorScope): TaskCursor {
  const { k, i } = openCursor(key, value, scopeOf(scope));
  const keyOk = typeof k === 'string' && (ISO_MICROS.test(k) || (scope.sort === 'due_at' && k === 'infinity'));
  if (keyOk && typeof i === 'string' && UUID.test(i)) return { key: k, id: i };
  throw invalidCursor();
}
