// The roles page. Each key's English and French side by side.
import { pageMessages } from '../page-messages.js';

export const rolesMessages = pageMessages({
  'roles.nav': { en: 'Roles', fr: 'Rôles' },
  'roles.created': { en: 'The role {name} is created.', fr: 'Le rôle {name} est créé.' },
  'roles.saved': { en: 'The role {name} is saved.', fr: 'Le rôle {name} est enregistré.' },
  'roles.title': { en: 'Roles', fr: 'Rôles' },
  'roles.new': { en: 'New role', fr: 'Nouveau rôle' },
  'roles.empty': { en: 'No role yet.', fr: 'Aucun rôle pour l’instant.' },
  'roles.name': { en: 'Name', fr: 'Nom' },
  'roles.description': { en: 'Description', fr: 'Description' },
  'roles.requiresSecondFactor': { en: 'Requires a second factor', fr: 'Exige un second facteur' },
  'roles.requiresSecondFactorHint': {
    en: 'Its holders must enrol an authenticator app or a passkey before anything else. Changing this needs every permission the role holds.',
    fr: 'Ses titulaires doivent enregistrer une application d’authentification ou une clé d’accès avant toute autre chose. Le changer demande toutes les permissions du rôle.',
  },
  'roles.secondFactorBadge': { en: 'second factor', fr: 'second facteur' },
  'roles.permissions': { en: 'Permissions', fr: 'Permissions' },
  'roles.builtIn': { en: 'built-in', fr: 'intégré' },
  'roles.editNamed': { en: 'Edit the role {name}', fr: 'Modifier le rôle {name}' },
  'roles.editTitle': { en: 'Edit the role {name}', fr: 'Modifier le rôle {name}' },
  'roles.createTitle': { en: 'New role', fr: 'Nouveau rôle' },
  'roles.cannotAdd': { en: 'You can only add permissions you hold yourself.', fr: 'Vous ne pouvez ajouter que des permissions que vous avez vous-même.' },
  'roles.cannotRemove': { en: 'This role holds {permissions}, which you do not have: you cannot remove any of its permissions.', fr: 'Ce rôle a {permissions}, que vous n’avez pas : vous ne pouvez lui retirer aucune permission.' },
});
