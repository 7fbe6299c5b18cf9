// A person's data as one document (GDPR articles 15 and 20; docs/PRIVACY.md): who may have it,
// the record that it was handed out, and the document itself, described member by member with
// the long lists read page by page as the client takes them (StreamedJson).
//
// Nothing of another person (GDPR article 15(4): the copy must not take from others' rights): what
// someone else did to this person keeps the fact and the actor's kind and id (the controller can
// say who, if asked), not their name, session, address or user agent (an API key keeps its name:
// an application, not a person); what this person did to others keeps the fact and the target's
// id, not the other person's name, nor the values changed, nor the details. Never a secret: the
// repository reads no hash, digest, sealed key or public key.
//
// Nothing the caller may not read through the API: `users.export` hands out the person's own
// account (profile, language, known devices, second factors, identity links, SCIM externalId); each
// linked section (LINKED_SECTIONS) needs what the operation that reads it needs, and is otherwise
// present, empty, and named in `withheld_sections`. The person exporting themselves is the data
// subject: their right of access covers what is linked to them, and nothing is withheld.
import type { components, operations } from '../../generated/openapi.js';
import type { ServiceDeps } from '../dependencies.js';
import type { Authority } from '../auth/authority.js';
import { isSelf, lacking } from '../auth/authority.js';
import { auditContext, type Origin } from '../audit/context.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { presentAuditEvent } from '../audit/presenter.js';
import type { ListedAuditEvent } from '../audit/repository.js';
import { findListedUser } from '../users/repository.js';
import { presentUser } from '../users/presenter.js';
import { rolesOfUser } from '../roles/repository.js';
import { permissionsOfRole, permissionsOfRoles } from '../roles/permissions.js';
import type { Permission } from '../auth/permissions.js';
import { notFound } from '../errors.js';
import { resourceId } from '../uuid.js';
import { StreamedJson } from '../streamed-json.js';
import * as repository from './repository.js';
import { auditEventsInvolvingPage } from '../audit/involving.js';
import type { Position } from '../pagination/position.js';
import { indexOperations, readContract } from '../contract/spec.js';

export type PersonalDataExport = components['schemas']['PersonalDataExport'];
type AuditEvent = components['schemas']['AuditEvent'];
type WithheldSection = components['schemas']['PersonalDataWithheldSection'];
type Section = WithheldSection['section'];

export const EXPORT_FORMAT = 'backoffice.personal-data.v1';

/** Rows per statement of a walk. */
export const EXPORT_PAGE = 500;

const userNotFound = () => notFound('not_found', 'No user has this id.');

/** Every row of a walk, page after page; a page shorter than EXPORT_PAGE is the last. */
async function* walk<Row extends { position_at: string; id: string | number }, Item>(read: (position: Position | undefined) => Promise<Row[]>, present: (row: Row) => Item): AsyncGenerator<Item> {
  let position: Position | undefined;
  for (;;) {
    const rows = await read(position);
    for (const row of rows) yield present(row);
    const last = rows.at(-1);
    if (rows.length < EXPORT_PAGE || !last) return;
    position = { at: last.position_at, id: String(last.id) };
  }
}

/** An audit event as the person's export shows it (the rule at the top of this file). */
export function presentEventFor(userId: string, row: ListedAuditEvent): AuditEvent {
  const event = presentAuditEvent(row);
  const byThisPerson = row.actor_type === 'user' && row.actor_id === userId;
  if (row.user_id !== userId) {
    // A user is labelled with their name, an invitation with the invitee's address: another
    // person's either way, unless it is this person's own account.
    const personal = event.target && ((event.target.type === 'user' && event.target.id !== userId) || event.target.type === 'invitation');
    const target = event.target && (personal ? { ...event.target, label: null } : event.target);
    return { ...event, target, user_id: null, details: {}, changes: null };
  }
  // Attempts on the account by nobody known (failed sign-ins) are about the person's account: kept whole.
  if (byThisPerson || row.actor_type === 'anonymous' || row.actor_type === 'unknown') return event;
  const label = row.actor_type === 'api_key' ? event.actor.label : null;
  return { ...event, actor: { ...event.actor, label, session_id: null }, ip_address: null, user_agent: null };
}

/**
 * Each linked section of the document, in the document's order, and the operation through which
 * the API reads what it holds for a caller other than the person: the section is the caller's only
 * if that operation would be (its `x-required-permission`, and its `security` for an API key).
 */
const LINKED_SECTIONS = {
  roles: 'getRole',
  sessions: 'listUserSessions',
  audit_events: 'listAuditEvents',
  invitations_received: 'getInvitation',
  invitations_sent: 'getInvitation',
  api_keys: 'getApiKey',
  tasks: 'getTask',
  meetings: 'getMeeting',
} as const satisfies Record<Section, keyof operations>;

interface SectionRead {
  section: Section;
  permission: Permission;
  keysMay: boolean;
}
let sectionReads: SectionRead[] | undefined;

/** LINKED_SECTIONS with what each operation needs, read from the contract once. Fails closed: an operation without a permission is a mistake here. */
function readsOfSections(): SectionRead[] {
  if (sectionReads) return sectionReads;
  const operations = indexOperations(readContract());
  sectionReads = (Object.entries(LINKED_SECTIONS) as [Section, keyof operations][]).map(([section, operationId]) => {
    const op = operations.find((o) => o.operationId === operationId);
    if (!op?.requiredPermission) throw new Error(`The export's section ${section} is read through ${operationId}, which the contract does not hold with a permission.`);
    return { section, permission: op.requiredPermission as Permission, keysMay: op.security.includes('apiKey') };
  });
  return sectionReads;
}

/** The linked sections the caller may not read through the API, in the document's order: none for the person themselves. */
export function withheldSections(authority: Authority, userId: string): WithheldSection[] {
  if (isSelf(authority, userId) || authority.kind === 'operator') return [];
  return readsOfSections().flatMap(({ section, permission, keysMay }): WithheldSection[] => {
    if (!authority.permissions.has(permission)) return [{ section, required_permission: permission, reason: 'permission_missing' }];
    if (authority.kind === 'api_key' && !keysMay) return [{ section, required_permission: permission, reason: 'signed_in_only' }];
    return [];
  });
}

const relations = <K extends string>(flags: Record<K, unknown>): K[] => (Object.keys(flags) as K[]).filter((k) => flags[k]);

/** What is read whole before the first byte: the short lists. */
const readShort = (db: ServiceDeps['db'], id: string) =>
  Promise.all([
    repository.settingsOf(db, id),
    repository.secondFactorsOf(db, id),
    repository.identityLinksOf(db, id),
    repository.scimExternalIdOf(db, id),
    repository.invitationsReceived(db, id),
  ]).then(([settings, secondFactors, identityLinks, scimExternalId, received]) => ({ settings, secondFactors, identityLinks, scimExternalId, received }));

/** The document of one person, its long lists read as they are written out. */
function documentOf(
  db: ServiceDeps['db'],
  user: NonNullable<Awaited<ReturnType<typeof findListedUser>>>,
  roles: Awaited<ReturnType<typeof rolesOfUser>>,
  short: Awaited<ReturnType<typeof readShort>>,
  withheld: WithheldSection[],
  at: Date,
) {
  const id = user.id;
  const invitation = ({ position_at: _, ...row }: Awaited<ReturnType<typeof repository.invitationsReceived>>[number]) => row;
  const out = new Set(withheld.map((w) => w.section));
  // A withheld section is never read: an empty list in its place, not a filtered one.
  const linked = <Item>(section: Section, value: () => Item[] | AsyncIterable<Item>): Item[] | AsyncIterable<Item> => (out.has(section) ? [] : value());
  return new StreamedJson<PersonalDataExport>({
    format: EXPORT_FORMAT,
    exported_at: at.toISOString(),
    withheld_sections: withheld,
    user: presentUser(user),
    language: short.settings.language,
    roles: linked('roles', () => roles.map((r) => ({ id: r.id, name: r.name, permissions: permissionsOfRole(r) }))),
    sessions: linked('sessions', () => walk((p) => repository.sessionsPage(db, id, p, EXPORT_PAGE), ({ position_at: _, ...row }) => row)),
    known_devices: short.settings.known_devices,
    second_factors: short.secondFactors,
    identity_links: short.identityLinks,
    scim_external_id: short.scimExternalId,
    audit_events: linked('audit_events', () => walk((p) => auditEventsInvolvingPage(db, id, p, EXPORT_PAGE), (row) => presentEventFor(id, row))),
    invitations_received: linked('invitations_received', () => short.received.map(invitation)),
    invitations_sent: linked('invitations_sent', () => walk((p) => repository.invitationsSentPage(db, id, p, EXPORT_PAGE), invitation)),
    api_keys: linked('api_keys', () => walk((p) => repository.apiKeysPage(db, id, p, EXPORT_PAGE), ({ position_at: _, ...row }) => ({ ...row, permissions: row.permissions as Permission[] }))),
    tasks: linked('tasks', () => walk((p) => repository.tasksPage(db, id, p, EXPORT_PAGE), (row) => ({ id: row.id, title: row.title, relations: relations({ assignee: row.assignee, creator: row.creator }) }))),
    meetings: linked('meetings', () => walk((p) => repository.meetingsPage(db, id, p, EXPORT_PAGE), (row) => ({ id: row.id, title: row.title, relations: relations({ organizer: row.organizer, attendee: row.attendee }) }))),
  });
}

export class PersonalDataService {
  constructor(private readonly deps: ServiceDeps) {}

  /**
   * Begins the export of a person's data: the caller must hold every permission the person
   * holds (else 404, as an unknown id: the document would show more than the caller may see;
   * a person exporting themselves holds what they hold), and each linked section the caller may
   * not read through the API is left empty and named (withheldSections). Records `user_exported`
   * before the first byte, since the document is out once it starts: a download cut short still
   * counts.
   */
  async begin(authority: Authority, rawId: string, origin: Origin): Promise<{ userId: string; at: Date; document: StreamedJson<PersonalDataExport> }> {
    const { db, clock } = this.deps;
    const id = resourceId(rawId);
    if (!id) throw userNotFound();
    const user = await findListedUser(db, id);
    if (!user) throw userNotFound();
    const roles = await rolesOfUser(db, id);
    if (lacking(authority, permissionsOfRoles(roles)).length > 0) throw userNotFound();
    const at = clock.now();
    await recordAuditEvent(db, {
      type: 'user_exported',
      at,
      context: auditContext(authority, origin),
      target: { type: 'user', id },
      userId: id,
    });
    return { userId: id, at, document: documentOf(db, user, roles, await readShort(db, id), withheldSections(authority, id), at) };
  }
}
