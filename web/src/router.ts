// Hash routes (`/#/users`): the pages are named like the API's resources (/users, /sessions, ...),
// so a page address must never be an API path. With the route after `#`, a reload or a shared
// link always reaches the SPA at `/`, and the service needs no list of page paths.
import { useEffect, useState } from 'preact/hooks';

/** The route as path segments: `#/users/42` -> ['users', '42']. */
export function currentRoute(): string[] {
  return window.location.hash.replace(/^#\/?/, '').split('?')[0]!.split('/').filter(Boolean).map(decodeURIComponent);
}

export function useRoute(): string[] {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}

export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join('/')}`;
}

export function navigate(...segments: string[]): void {
  window.location.hash = href(...segments).slice(1);
}
