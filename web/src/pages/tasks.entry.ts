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

/** Its audit event types: their names in the audit page's filter, and their lines in the journal ({actor}, {target}, {reason}). */
export const auditTypes = {
  task_created: { name: { en: 'Task created', fr: 'Tâche créée' }, line: { en: '{actor} created task {target}', fr: '{actor} a créé la tâche {target}' } },
  task_updated: { name: { en: 'Task changed', fr: 'Tâche modifiée' }, line: { en: '{actor} changed task {target}', fr: '{actor} a modifié la tâche {target}' } },
  task_deleted: { name: { en: 'Task deleted', fr: 'Tâche supprimée' }, line: { en: '{actor} deleted task {target}', fr: '{actor} a supprimé la tâche {target}' } },
} satisfies AuditTypeWording;
