// The web interface's token handling and error wording, run in Node with a fake clock and store:
// one refresh in flight at a time, refresh a minute before expiry, a refused refresh ends the
// session, another tab's fresh set is adopted; 403/429/detail turned into the right sentence.
import { describe, expect, it, vi } from 'vitest';
import { TokenKeeper, STORAGE_KEY, REFRESH_MARGIN_MS, SessionEndedError, type RefreshOutcome, type StoredTokens, type TokenSet } from '../web/src/api/tokens.js';
import { ApiError, describeError } from '../web/src/api/problem.js';
import { translator, dictionaries } from '../web/src/messages.js';
import { describeChanges, describeEvent, type AuditEvent } from '../web/src/audit-line.js';

class MemoryStore {
  readonly items = new Map<string, string>();
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string) {
    this.items.set(key, value);
  }
  removeItem(key: string) {
    this.items.delete(key);
  }
}

const tokenSet = (n: number): TokenSet => ({ token_type: 'Bearer', expires_in: 600, access_token: `access-${n}`, refresh_token: `refresh-${n}` });

function setup(refresh: (current: StoredTokens) => Promise<RefreshOutcome>) {
  let now = 1_000_000;
  const timers: { run: () => void; at: number }[] = [];
  const store = new MemoryStore();
  const keeper = new TokenKeeper({
    store,
    refresh,
    now: () => now,
    setTimer: (run, ms) => timers.push({ run, at: now + ms }),
    clearTimer: (timer) => timers.splice(timers.indexOf(timer as never), 1),
  });
  return { keeper, store, timers, advance: (ms: number) => (now += ms), now: () => now };
}

describe('TokenKeeper', () => {
  it('uses the access token as is while it has more than a minute to live', async () => {
    const refresh = vi.fn();
    const { keeper, advance } = setup(refresh);
    keeper.accept(tokenSet(1));
    advance(600_000 - REFRESH_MARGIN_MS - 1);
    expect(await keeper.accessToken()).toBe('access-1');
    expect(refresh).not.toHaveBeenCalled();
  });

  it('refreshes once for any number of callers when the token is about to expire', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const refresh = vi.fn(async (current: StoredTokens): Promise<RefreshOutcome> => {
      await gate;
      expect(current.refreshToken).toBe('refresh-1');
      return { ok: true, tokenSet: tokenSet(2) };
    });
    const { keeper, store, advance } = setup(refresh);
    keeper.accept(tokenSet(1));
    advance(600_000 - REFRESH_MARGIN_MS);
    const callers = Array.from({ length: 10 }, () => keeper.accessToken());
    release();
    expect(await Promise.all(callers)).toEqual(Array(10).fill('access-2'));
    expect(refresh).toHaveBeenCalledTimes(1);
    expect(JSON.parse(store.getItem(STORAGE_KEY)!)).toMatchObject({ accessToken: 'access-2', refreshToken: 'refresh-2' });
  });

  it('arms a timer a minute before expiry that refreshes an idle page', async () => {
    const refresh = vi.fn(async (): Promise<RefreshOutcome> => ({ ok: true, tokenSet: tokenSet(2) }));
    const { keeper, timers, now } = setup(refresh);
    keeper.accept(tokenSet(1));
    expect(timers).toHaveLength(1);
    expect(timers[0]!.at - now()).toBe(600_000 - REFRESH_MARGIN_MS);
    timers[0]!.run();
    await vi.waitFor(() => expect(refresh).toHaveBeenCalledTimes(1));
    expect(await keeper.accessToken()).toBe('access-2');
  });

  it('ends the session, clears the store and tells listeners when the server refuses the refresh', async () => {
    const { keeper, store, advance } = setup(async () => ({ ok: false, final: true, error: new Error('401') }));
    const reasons: string[] = [];
    keeper.onSignOut((reason) => reasons.push(reason));
    keeper.accept(tokenSet(1));
    advance(600_000);
    await expect(keeper.accessToken()).rejects.toBeInstanceOf(SessionEndedError);
    expect(reasons).toEqual(['session_ended']);
    expect(keeper.signedIn).toBe(false);
    expect(store.getItem(STORAGE_KEY)).toBeNull();
  });

  it('keeps the session through a network failure of the refresh', async () => {
    const failure = new TypeError('fetch failed');
    const { keeper, advance } = setup(async () => ({ ok: false, final: false, error: failure }));
    keeper.accept(tokenSet(1));
    advance(600_000);
    await expect(keeper.accessToken()).rejects.toBe(failure);
    expect(keeper.signedIn).toBe(true);
  });

  it('adopts a set another tab stored instead of presenting a used-up refresh token', async () => {
    const refresh = vi.fn();
    const { keeper, store, advance, now } = setup(refresh);
    keeper.accept(tokenSet(1));
    advance(600_000);
    store.setItem(STORAGE_KEY, JSON.stringify({ accessToken: 'access-9', refreshToken: 'refresh-9', issuedAt: now(), expiresAt: now() + 600_000 }));
    expect(await keeper.accessToken()).toBe('access-9');
    expect(refresh).not.toHaveBeenCalled();
  });

  it('after a 401 refreshes only if no newer set arrived since the request was sent', async () => {
    const refresh = vi.fn(async (): Promise<RefreshOutcome> => ({ ok: true, tokenSet: tokenSet(2) }));
    const { keeper, advance, now } = setup(refresh);
    keeper.accept(tokenSet(1));
    advance(1000);
    const sentAt = now();
    await keeper.refreshAfterRejection(sentAt);
    expect(refresh).toHaveBeenCalledTimes(1);
    await keeper.refreshAfterRejection(sentAt - 1);
    expect(refresh).toHaveBeenCalledTimes(1);
  });

  it('follows a sign-out in another tab', () => {
    const { keeper, store } = setup(vi.fn());
    const reasons: string[] = [];
    keeper.onSignOut((reason) => reasons.push(reason));
    keeper.accept(tokenSet(1));
    store.removeItem(STORAGE_KEY);
    keeper.storageChanged();
    expect(keeper.signedIn).toBe(false);
    expect(reasons).toEqual(['signed_out']);
  });
});

describe('describeError', () => {
  const headers = (entries: Record<string, string> = {}) => new Headers(entries);
  const problem = (status: number, extra: Record<string, unknown> = {}) => ({
    type: 'urn:problem:backoffice:x',
    title: 'Title',
    status,
    code: 'x',
    request_id: 'r',
    detail: 'What the server says.',
    ...extra,
  });

  it('shows the problem detail', () => {
    expect(describeError(new ApiError({ status: 409, headers: headers() }, problem(409)), translator('en'))).toBe('What the server says.');
  });

  it('names the permission on 403, in both languages', () => {
    const error = new ApiError({ status: 403, headers: headers() }, problem(403, { required_permission: 'users.list' }));
    expect(describeError(error, translator('en'))).toBe("You don't have permission to do this: it needs the permission users.list.");
    expect(describeError(error, translator('fr'))).toContain('users.list');
  });

  it('gives the wait on 429, from the body or else from Retry-After', () => {
    expect(describeError(new ApiError({ status: 429, headers: headers() }, problem(429, { retry_after: 540 })), translator('en'))).toBe(
      'Too many attempts. Try again in 540 seconds.',
    );
    expect(describeError(new ApiError({ status: 429, headers: headers({ 'Retry-After': '30' }) }, problem(429)), translator('fr'))).toBe(
      'Trop de tentatives. Réessayez dans 30 secondes.',
    );
  });

  it('says the service cannot be reached on a network failure', () => {
    expect(describeError(new TypeError('Failed to fetch'), translator('en'))).toBe(dictionaries.en['error.network']);
  });
});

describe('the audit line of a leak report', () => {
  const event = (leaked: string) =>
    ({
      id: '1',
      at: '2026-12-17T10:00:00.000Z',
      type: 'api_key_leak_reported',
      actor: { type: 'anonymous', id: null, label: null, session_id: null },
      target: { type: 'api_key', id: 'k', label: 'crm' },
      details: { reporter: 'GitHub secret scanning', leaked },
      changes: null,
      ip_address: null,
    }) as unknown as AuditEvent;

  it('says the key was revoked when its current secret leaked, and only the previous secret stopped when that one did', () => {
    expect(describeEvent(event('current'), translator('en'))).toBe('Key crm was reported leaked and revoked');
    expect(describeEvent(event('previous'), translator('en'))).toBe('The previous secret of key crm was reported leaked and stopped');
    expect(describeEvent(event('previous'), translator('fr'))).toBe('L’ancien secret de la clé crm a été signalé divulgué et arrêté');
  });
});

describe('the changes of an audit event', () => {
  const taskUpdated = {
    id: '2',
    at: '2026-12-17T10:00:00.000Z',
    type: 'task_updated',
    actor: { type: 'user', id: 'u', label: 'Ada Lovelace', session_id: null },
    target: { type: 'task', id: 't', label: 'Budget' },
    details: {},
    changes: { before: { assignee_id: null, due_at: null, labels: [], custom_field: 'a' }, after: { assignee_id: 'u1', due_at: null, labels: [], custom_field: 'b' } },
    ip_address: null,
  } as unknown as AuditEvent;
  const naming = { formatDate: (value: string) => value, nameOf: (id: string) => (id === 'u1' ? 'Grace Hopper' : undefined) };

  it('names the fields in words in the person\'s language, the ids by name, and leaves out a field empty before and after', () => {
    expect(describeChanges(taskUpdated, translator('en'), naming)).toBe('assignee: nothing → Grace Hopper; custom_field: a → b');
    expect(describeChanges(taskUpdated, translator('fr'), naming)).toBe('responsable: rien → Grace Hopper; custom_field: a → b');
  });
});
