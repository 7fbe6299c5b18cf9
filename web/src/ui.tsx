// Small building blocks shared by the pages: messages, list states, labelled fields.
import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, describeError } from './api/problem.js';
import { useI18n, type T } from './i18n.js';
import type { Loaded } from './load.js';
import { lacking, lackingToToggle } from './authority.js';

/**
 * The server's explanation of a failure, announced to screen readers, with Try again where trying
 * again may help (not after a 4xx refusal such as a missing permission, but after a lost
 * connection, a 5xx, a 408 or a 429).
 */
export function ErrorMessage({ error, onRetry: retry }: { error: unknown; onRetry?: () => void }) {
  const { t, language } = useI18n();
  if (!error) return null;
  const final = error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429;
  const onRetry = final ? undefined : retry;
  return (
    <div class="message error" role="alert">
      <span>{describeError(error, t, language)}</span>
      {onRetry && (
        <button type="button" class="link" onClick={onRetry}>
          {t('common.retry')}
        </button>
      )}
    </div>
  );
}

/**
 * Something shown once that the person must not miss (a new secret, recovery codes): scrolled to
 * the top of the screen and focused when it appears and whenever `what` changes (a second
 * rotation), so neither the page's scroll position nor a closed dialog leaves it off-screen.
 * The element needs tabIndex={-1}.
 */
export function useRevealed<E extends HTMLElement>(what: unknown) {
  const ref = useRef<E>(null);
  // Layout effect: in the same frame as the panel, before anything paints it off-screen.
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    element.scrollIntoView({ block: 'start' });
    element.focus({ preventScroll: true });
  }, [what]);
  return ref;
}

/**
 * A secret the server shows this once (an API key's, a webhook endpoint's signing secret): the
 * page's own words for what it is, a Copy button, and the button that puts it away for good.
 * It comes into view with the focus on it (useRevealed).
 */
export function SecretOnce({ id, title, once, done, secret, onDone }: { id: string; title: string; once: string; done: string; secret: string; onDone: () => void }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  const ref = useRevealed<HTMLElement>(secret);
  const copy = async () => {
    await navigator.clipboard.writeText(secret);
    setCopied(true);
  };
  return (
    <section class="message success once" aria-labelledby={`${id}-title`} tabIndex={-1} ref={ref} data-testid={`${id}-panel`}>
      <h2 id={`${id}-title`}>{title}</h2>
      <p>
        <strong>{once}</strong>
      </p>
      <p class="secret" data-testid={id}>
        {secret}
      </p>
      <div class="actions">
        <button type="button" onClick={copy}>
          {t('common.copy')}
        </button>
        <span role="status">{copied ? t('common.copied') : ''}</span>
        <button type="button" class="secondary" onClick={onDone}>
          {done}
        </button>
      </div>
    </section>
  );
}

/**
 * A table in a box of its own that scrolls sideways when the table is wider than the screen (a
 * phone), so the page itself never does. Focusable, so the keyboard can scroll it too.
 */
export function TableScroll({ children }: { children: ComponentChildren }) {
  return (
    <div class="table-scroll" tabIndex={0}>
      {children}
    </div>
  );
}

export function Notice({ children, tone = 'info' }: { children: ComponentChildren; tone?: 'info' | 'success' | 'warning' }) {
  return (
    <div class={`message ${tone}`} role="status">
      {children}
    </div>
  );
}

export function Loading() {
  const { t } = useI18n();
  return (
    <p class="loading" role="status" aria-live="polite">
      {t('common.loading')}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** Every list page's states in one place: the error (with retry), loading, empty, or the items. */
export function ListState<T>({ loaded, empty, children }: { loaded: Loaded<{ data: T[] }>; empty: string; children: (items: T[]) => ComponentChildren }) {
  if (loaded.error) return <ErrorMessage error={loaded.error} onRetry={loaded.reload} />;
  if (loaded.loading && !loaded.data) return <Loading />;
  const items = loaded.data?.data ?? [];
  if (items.length === 0) return <Empty>{empty}</Empty>;
  return <>{children(items)}</>;
}

type InputProps = InputHTMLAttributes & { label: string; id: string; hint?: string | undefined };

/** An input with its label (and hint) tied to it. */
export function Field({ label, id, hint, ...input }: InputProps) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

/** The page's heading, focused when the page opens so keyboard and screen-reader users start there. */
export function PageTitle({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

/** Why a control is disabled: a short `title`, and the id of the element that explains it (its aria-describedby). */
export interface Locked {
  title: string;
  describedBy: string;
}

/** A control that needs `missing`, permissions the person lacks: its Locked, explained by the element `describedBy`; none missing, undefined. */
export function lockedFor(t: T, describedBy: string, missing: readonly string[]): Locked | undefined {
  return missing.length === 0 ? undefined : { title: t('authority.needs', { permissions: missing.join(', ') }), describedBy };
}

/** The hint a locked control points at. */
export function Why({ locked }: { locked: Locked | undefined }) {
  if (!locked) return null;
  return (
    <p id={locked.describedBy} class="hint">
      {locked.title}
    </p>
  );
}

/**
 * The boxes of a set the person may not tick or untick (permissions on a role, roles on a user),
 * judged against the target as saved, as the server does (lackingToToggle): each box's Locked, and
 * the two hints they point at (`ids.add`: some box cannot be added; `ids.remove`: the target holds
 * what the person lacks, so nothing can be removed).
 */
export function toggleLocks<I>(
  t: T,
  mine: readonly string[],
  holds: readonly string[],
  items: readonly I[],
  facts: (item: I) => { has: boolean; gives: readonly string[] },
  hints: { ids: { add: string; remove: string }; add: string; remove: (permissions: string) => string },
): { locked: (item: I) => Locked | undefined; hints: ComponentChildren } {
  const outranked = lacking(mine, holds);
  const removeHint = hints.remove(outranked.join(', '));
  const missing = (item: I) => {
    const { has, gives } = facts(item);
    return { has, missing: lackingToToggle(mine, { holds, has }, gives) };
  };
  const locked = (item: I): Locked | undefined => {
    const box = missing(item);
    if (box.missing.length === 0) return undefined;
    return box.has ? { title: removeHint, describedBy: hints.ids.remove } : lockedFor(t, hints.ids.add, box.missing);
  };
  const cannotAdd = items.some((item) => {
    const box = missing(item);
    return !box.has && box.missing.length > 0;
  });
  return {
    locked,
    hints: (
      <>
        {cannotAdd && (
          <p id={hints.ids.add} class="hint">
            {hints.add}
          </p>
        )}
        {outranked.length > 0 && (
          <p id={hints.ids.remove} class="hint">
            {removeHint}
          </p>
        )}
      </>
    ),
  };
}

/** The pages of a list paged by cursor seen so far (their cursors), so "previous" needs no server support. */
export function useCursorPages() {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  return {
    cursor: cursors[cursors.length - 1],
    /** Which page this is, from 1. */
    number: cursors.length,
    /** Back to the first page, as when the filters change. */
    restart: () => setCursors([undefined]),
    previous: cursors.length > 1 ? () => setCursors(cursors.slice(0, -1)) : undefined,
    next: (nextCursor: string | null | undefined) => (nextCursor ? () => setCursors([...cursors, nextCursor]) : undefined),
  };
}

/**
 * The previous and next page buttons under a list (a missing action is a disabled button), and
 * which page is shown once it is (`number`; nothing while `loading`).
 */
export function Pager({ label, previous, next, number, loading }: { label: string; previous: (() => void) | undefined; next: (() => void) | undefined; number: number; loading: boolean }) {
  const { t } = useI18n();
  return (
    <nav class="actions" aria-label={label}>
      <button type="button" class="secondary" disabled={!previous} onClick={previous}>
        {t('common.previous')}
      </button>
      <button type="button" class="secondary" disabled={!next} onClick={next}>
        {t('common.next')}
      </button>
      <span class="hint" role="status">
        {loading ? '' : t('common.pageNumber', { number })}
      </span>
    </nav>
  );
}
