// The public shape of a task: what the contract's Task schema allows.
import type { components } from '../../generated/openapi.js';
import type { ListedTask } from './repository.js';

export type TaskResource = components['schemas']['Task'];

export function presentTask(task: ListedTask): TaskResource {
  return {
    id: task.id,
    title: task.title,
    description: task.description,
    status: task.status,
    priority: task.priority,
    due_at: task.due_at,
    assignee_id: task.assignee_id,
    // The users table's foreign key keeps an assignee's row, so a set id always has its person.
    assignee: task.assignee_id === null ? null : { id: task.assignee_id, label: task.assignee_label ?? '', status: task.assignee_status ?? 'disabled' },
    created_by: { type: task.created_by_type, id: task.created_by_id, label: task.created_by_label },
    created_at: task.created_at,
    updated_at: task.updated_at,
    completed_at: task.completed_at,
  };
}
