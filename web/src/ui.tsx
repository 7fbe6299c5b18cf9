// Small building blocks shared by the pages: messages, list states, labelled fields.
import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { describeError } from './api/problem.js';
import { useI18n, type T } from './i18n.js';
import type { Loaded } from './load.js';

/** The server's explanation of a failure, announced to screen readers. */
export function ErrorMessage({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { t } = useI18n();
  if (!error) return null;
  return (
    <div class="message error" role="alert">
      <span>{describeError(error, t)}</span>
      {onRetry && (
        <button type="button" class="link" onClick={onRetry}>
          {t('common.retry')}
        </button>
      )}
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
