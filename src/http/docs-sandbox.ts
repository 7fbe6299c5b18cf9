// The reference page at /docs shares its origin with the back office, which keeps its refresh
// token in localStorage. It is served with a CSP `sandbox` without allow-same-origin: the page
// runs in an opaque origin of its own, so its scripts (Redoc's, or any injected) reach neither
// that storage nor the cookies, and may not call the API as the signed-in person.
//
// Redoc keeps its settings in localStorage and cookies and stops rendering when reading them
// throws, as it does there: `make docs` puts STORAGE_STAND_IN in each page's <head>, before Redoc
// runs, to give it storage of its own, in memory. Only a stand-in: a script that removes it still
// meets the browser's refusal, never the back office's storage.

/** What the reference may do in its sandbox: run its scripts, open links in new tabs. */
const SANDBOX = 'sandbox allow-scripts allow-popups allow-popups-to-escape-sandbox';
const POLICY =
  "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; worker-src 'self' blob:; font-src 'self' data:; connect-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";
export const DOCS_CSP = `${SANDBOX}; ${POLICY}`;

export const STORAGE_STAND_IN = `<script>(() => {
  const memory = () => { const items = new Map(); return {
    getItem: (k) => (items.has(String(k)) ? items.get(String(k)) : null), setItem: (k, v) => void items.set(String(k), String(v)),
    removeItem: (k) => void items.delete(String(k)), clear: () => items.clear(), key: (i) => [...items.keys()][i] ?? null,
    get length() { return items.size; } }; };
  for (const name of ['localStorage', 'sessionStorage']) {
    try { void window[name]; } catch { Object.defineProperty(window, name, { value: memory(), configurable: true }); }
  }
  try { void document.cookie; } catch {
    const jar = new Map();
    Object.defineProperty(document, 'cookie', { configurable: true,
      get: () => [...jar].map(([k, v]) => k + '=' + v).join('; '),
      set: (text) => { const [pair] = String(text).split(';'); const at = pair.indexOf('='); if (at > 0) jar.set(pair.slice(0, at).trim(), pair.slice(at + 1)); } });
  }
})();</script>`;

/** A built Redoc page with the stand-in first in its <head> (once). */
export function withStorageStandIn(html: string): string {
  return html.includes(STORAGE_STAND_IN) ? html : html.replace('<head>', `<head>${STORAGE_STAND_IN}`);
}
