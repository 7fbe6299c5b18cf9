// Keeps the login token set of the signed-in person and refreshes it before the access token's
// 10 minutes run out. One refresh at a time: concurrent callers share the refresh in flight, and,
// where the browser has Web Locks, tabs take turns and adopt a set another tab already obtained.
// Free of DOM globals (everything is injected) so the service's tests can run it in Node.
import type { components } from '../../../generated/openapi.js';

export type TokenSet = components['schemas']['TokenSet'];

export interface StoredTokens {
  accessToken: string;
  refreshToken: string;
  /** When the access token expires, by this browser's clock (ms since the epoch). */
  expiresAt: number;
  /** When this set was received (ms since the epoch). */
  issuedAt: number;
}

/** Why the person is no longer signed in. */
export type SignOutReason = 'signed_out' | 'session_ended';

export type RefreshOutcome =
  | { ok: true; tokenSet: TokenSet }
  /** `final`: the server refused the refresh token, so the session is over (not a network blip). */
  | { ok: false; final: boolean; error: unknown };

/** Where the set is kept: window.localStorage in the browser (see docs/WEB.md for why). */
export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface TokenKeeperOptions {
  store: KeyValueStore;
  refresh: (current: StoredTokens) => Promise<RefreshOutcome>;
  /** Runs `task` while holding a lock shared by every tab (navigator.locks); absent: this tab only. */
  lock?: <T>(name: string, task: () => Promise<T>) => Promise<T>;
  now?: () => number;
  setTimer?: (run: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
}

export const STORAGE_KEY = 'backoffice.tokens';
/** Refresh this long before the access token expires, so no request goes out with a stale one. */
export const REFRESH_MARGIN_MS = 60_000;

/** Thrown to a caller whose request cannot go on because the session is over. */
export class SessionEndedError extends Error {
  override name = 'SessionEndedError';
}

export class TokenKeeper {
  private tokens: StoredTokens | null;
  private inflight: Promise<StoredTokens> | null = null;
  private timer: unknown;
  private readonly listeners = new Set<(reason: SignOutReason) => void>();
  private readonly now: () => number;

  constructor(private readonly options: TokenKeeperOptions) {
    this.now = options.now ?? Date.now;
    this.tokens = this.readStore();
    this.schedule();
  }

  get signedIn(): boolean {
    return this.tokens !== null;
  }

  /** Called with the reason whenever the session ends (here or, via storageChanged, in another tab). */
  onSignOut(listener: (reason: SignOutReason) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Keeps a set just received from POST /sessions or POST /tokens. */
  accept(tokenSet: TokenSet): StoredTokens {
    const issuedAt = this.now();
    this.tokens = {
      accessToken: tokenSet.access_token,
      refreshToken: tokenSet.refresh_token,
      issuedAt,
      expiresAt: issuedAt + tokenSet.expires_in * 1000,
    };
    this.options.store.setItem(STORAGE_KEY, JSON.stringify(this.tokens));
    this.schedule();
    return this.tokens;
  }

  /** The access token to send now, refreshed first when it is about to expire; null when signed out. */
  async accessToken(): Promise<string | null> {
    if (!this.tokens) return null;
    if (this.now() >= this.tokens.expiresAt - REFRESH_MARGIN_MS) await this.refresh();
    return this.tokens?.accessToken ?? null;
  }

  /** Refreshes, joining the refresh already in flight if there is one. */
  refresh(): Promise<StoredTokens> {
    if (!this.inflight) {
      const run = () => this.refreshOnce();
      const locked = this.options.lock ? this.options.lock('backoffice.refresh', run) : run();
      this.inflight = locked.finally(() => {
        this.inflight = null;
      });
    }
    return this.inflight;
  }

  /**
   * A request sent at `sentAt` was answered 401 (its access token expired or was revoked): refresh
   * once and let the caller retry, unless a newer set arrived since the request was sent.
   */
  async refreshAfterRejection(sentAt: number): Promise<void> {
    if (this.inflight) {
      await this.inflight;
      return;
    }
    if (this.tokens && this.tokens.issuedAt > sentAt) return;
    await this.refresh();
  }

  /** Forgets the set (after DELETE /sessions/current, or when the server ends the session). */
  end(reason: SignOutReason): void {
    const wasSignedIn = this.tokens !== null;
    this.tokens = null;
    this.options.store.removeItem(STORAGE_KEY);
    this.schedule();
    if (wasSignedIn) for (const listener of this.listeners) listener(reason);
  }

  /** Another tab changed the stored set (the browser's `storage` event): follow it. */
  storageChanged(): void {
    const stored = this.readStore();
    if (!stored) {
      this.end('signed_out');
      return;
    }
    this.tokens = stored;
    this.schedule();
  }

  private async refreshOnce(): Promise<StoredTokens> {
    // While this tab waited for the lock, another one may have refreshed: use its set instead of
    // presenting a refresh token that is already used up.
    const stored = this.readStore();
    if (stored && this.tokens && stored.refreshToken !== this.tokens.refreshToken && stored.issuedAt >= this.tokens.issuedAt) {
      this.tokens = stored;
      this.schedule();
      return stored;
    }
    const current = this.tokens ?? stored;
    if (!current) throw new SessionEndedError('Not signed in.');
    const outcome = await this.options.refresh(current);
    if (outcome.ok) return this.accept(outcome.tokenSet);
    if (outcome.final) {
      this.end('session_ended');
      throw new SessionEndedError('The session has ended.');
    }
    throw outcome.error;
  }

  /** Arms a timer for a refresh a minute before expiry, so an idle page stays signed in. */
  private schedule(): void {
    const { setTimer = setTimeout, clearTimer = (t: unknown) => clearTimeout(t as ReturnType<typeof setTimeout>) } = this.options;
    if (this.timer !== undefined) clearTimer(this.timer);
    this.timer = undefined;
    if (!this.tokens) return;
    const wait = Math.max(0, this.tokens.expiresAt - REFRESH_MARGIN_MS - this.now());
    this.timer = setTimer(() => {
      this.timer = undefined;
      // A failure already ended the session (listeners told) or is a network blip retried on next use.
      this.refresh().catch(() => undefined);
    }, wait);
  }

  private readStore(): StoredTokens | null {
    const raw = this.options.store.getItem(STORAGE_KEY);
    if (!raw) return null;
    try {
      const parsed = JSON.parse(raw) as StoredTokens;
      return typeof parsed.accessToken === 'string' && typeof parsed.refreshToken === 'string' ? parsed : null;
    } catch {
      return null;
    }
  }
}
