// What each permission lets its holder do, in both languages, shown beside its checkbox.
// Typed against the contract's Permission: a permission added to the contract fails the type
// check until it is described here or by its feature's page (web/src/pages/<page>.entry.ts).
import type { components } from '../../generated/openapi.js';
import { pageMessages, type Wording } from './page-messages.js';
import { declaredByPages, type DeclaredByPages } from './pages/declared-by-pages.js';

type Permission = components['schemas']['Permission'];

/** The platform's permissions; a feature's page declares its own (its entry's `permissions`). */
const platform = {
  'users.list': { en: 'See the list of users.', fr: 'Voir la liste des utilisateurs.' },
  'users.read': { en: 'Open a user’s record.', fr: 'Ouvrir la fiche d’un utilisateur.' },
  'users.create': { en: 'Create users.', fr: 'Créer des utilisateurs.' },
  'users.update': { en: 'Change a user’s name and roles.', fr: 'Modifier le nom et les rôles d’un utilisateur.' },
  'users.disable': { en: 'Disable or re-enable a user.', fr: 'Désactiver ou réactiver un utilisateur.' },
  'users.reset_second_factors': { en: 'Remove a user’s second factors, so they enrol again.', fr: 'Supprimer les seconds facteurs d’un utilisateur, qui s’inscrit à nouveau.' },
  'users.export': { en: 'Download the data of a person holding no more rights than you (their GDPR request).', fr: 'Télécharger les données d’une personne qui n’a pas plus de droits que vous (sa demande RGPD).' },
  'users.erase': { en: 'Erase a person: their name, e-mail, addresses and sign-in means, for good.', fr: 'Effacer une personne : son nom, son e-mail, ses adresses et ses moyens de connexion, définitivement.' },
  'roles.manage': { en: 'Create, change and delete roles.', fr: 'Créer, modifier et supprimer des rôles.' },
  'api_keys.manage': { en: 'Create, change, rotate and revoke API keys.', fr: 'Créer, modifier, renouveler et révoquer des clés d’API.' },
  'sessions.manage': { en: 'See and end other people’s sessions.', fr: 'Voir et fermer les sessions des autres.' },
  'audit.read': { en: 'Read the audit journal and the sign-in chart.', fr: 'Lire le journal d’audit et le graphique des connexions.' },
  'webhooks.manage': { en: 'Create and change webhook endpoints, and replay deliveries.', fr: 'Créer et modifier des points de terminaison webhook, et rejouer des livraisons.' },
  'events.read': { en: 'Read the feed of events.', fr: 'Lire le flux d’événements.' },
  'identity_providers.manage': { en: 'Add, change and remove identity providers.', fr: 'Ajouter, modifier et supprimer des fournisseurs d’identité.' },
  'scim.provision': { en: 'Provision users and groups from a company directory (SCIM).', fr: 'Alimenter utilisateurs et groupes depuis l’annuaire d’une entreprise (SCIM).' },
} satisfies Partial<Record<Permission, Wording>>;

// Every permission of the contract described once: a permission no one describes does not compile.
const described: Record<Permission, Wording> = { ...platform, ...declaredByPages<Wording>('permissions') } as typeof platform & DeclaredByPages<'permissions'>;


export const permissionMessages = pageMessages(
  Object.fromEntries(Object.entries(described).map(([permission, wording]) => [`permission.${permission}`, wording])) as Record<`permission.${Permission}`, Wording>,
);
