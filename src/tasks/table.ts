// This feature's tables, beside the code that reads them; `declare module` adds them to `Database` (src/db/schema.ts).
import type { ColumnType, Generated } from 'kysely';
import type { Nullable, Timestamp } from '../db/schema.js';

export type TaskStatus = 'todo' | 'in_progress' | 'done' | 'cancelled';
export type TaskPriority = 'low' | 'normal' | 'high' | 'urgent';

export interface TasksTable {
  id: Generated<string>;
  title: string;
  description: Nullable<string>;
  status: ColumnType<TaskStatus, TaskStatus | undefined, TaskStatus>;
  priority: ColumnType<TaskPriority, TaskPriority | undefined, TaskPriority>;
  due_at: Nullable<Date | string>;
  assignee_id: Nullable<string>;
  /** Exactly one of the two creators is set (a check constraint says so). */
  created_by_user_id: Nullable<string>;
  created_by_api_key_id: Nullable<string>;
  created_at: Timestamp;
  updated_at: Timestamp;
  completed_at: Nullable<Date | string>;
  /** 1 at creation, one more at every UPDATE (the repository's statements add it). */
  version: ColumnType<number, never, number>;
}

declare module '../db/schema.js' {
  interface Database {
    tasks: TasksTable;
  }
}
