// The home page. Each key's English and French side by side.
import { pageMessages } from '../page-messages.js';

export const homeMessages = pageMessages({
  'home.nav': { en: 'Home', fr: 'Accueil' },
  'home.title': { en: 'Home', fr: 'Accueil' },
  'home.welcome': { en: 'Welcome, {name}.', fr: 'Bienvenue, {name}.' },
  'home.chartTitle': { en: 'Sign-ins per hour, last 7 days', fr: 'Connexions par heure, 7 derniers jours' },
  'home.chartSummary': { en: 'Last 7 days: {succeeded} succeeded, {failed} failed, {throttled} throttled.', fr: '7 derniers jours : {succeeded} réussies, {failed} échouées, {throttled} bloquées.' },
  'home.chartTable': { en: 'The numbers, hour by hour (hours with sign-ins)', fr: 'Les chiffres, heure par heure (heures avec des connexions)' },
  'home.chartEmpty': { en: 'No sign-in in the last 7 days.', fr: 'Aucune connexion ces 7 derniers jours.' },
  'home.hour': { en: 'Hour', fr: 'Heure' },
  'home.succeeded': { en: 'Succeeded', fr: 'Réussies' },
  'home.failed': { en: 'Failed', fr: 'Échouées' },
  'home.throttled': { en: 'Throttled', fr: 'Bloquées' },
  'home.myActivity': { en: 'My recent activity', fr: 'Mon activité récente' },
  'home.myActivityEmpty': { en: 'Nothing recorded yet.', fr: 'Rien d’enregistré pour l’instant.' },
});
