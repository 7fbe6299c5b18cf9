// The tasks page's entry: its link in the navigation and its wording; the page (pages/tasks.tsx) loads when opened.
import type { AuditTypeWording, PageEntry, PermissionWording } from '../page-entry.js';
import { tasksMessages as messages } from './tasks.messages.js';

export { messages };

export const page = {
  route: 'tasks',
  nav: { section: 'work', order: 10, label: 'tasks.nav', needs: 'tasks.list' },
  module: 'tasks',
} satisfies PageEntry<keyof typeof messages>;

/** What its permissions let their holder do, shown beside their checkboxes. */
export const permissions = {
  'tasks.list': { en: 'See the list of tasks.', fr: 'Voir la liste des tâches.' },
  'tasks.read': { en: 'Open a task.', fr: 'Ouvrir une tâche.' },
  'tasks.create': { en: 'Create tasks.', fr: 'Créer des tâches.' },
  'tasks.update': { en: 'Change tasks and their status.', fr: 'Modifier les tâches et leur statut.' },
  'tasks.delete': { en: 'Delete tasks.', fr: 'Supprimer des tâches.' },
} satisfies PermissionWording;

/** The names of its audit event types in the audit page's filter. */
export const auditTypes = {
  task_created: { en: 'Task created', fr: 'Tâche créée' },
  task_updated: { en: 'Task changed', fr: 'Tâche modifiée' },
  task_deleted: { en: 'Task deleted', fr: 'Tâche supprimée' },
} satisfies AuditTypeWording;
