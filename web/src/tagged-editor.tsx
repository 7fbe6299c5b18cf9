// The one way a page changes a resource it read (docs/SAFE-WRITES.md): the resource is read on its
// own with its ETag, the form sends the tag back in If-Match, and when someone else changed the
// resource meanwhile (412) nothing is saved: the resource is read again and the form rebuilt from it
// under a notice. Every edit page uses it, so a new one is safe by copying any of them.
import { Fragment, type ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { changedMeanwhile, type Tagged } from './api/client.js';
import { useI18n } from './i18n.js';
import { useLoad } from './load.js';
import { ErrorMessage, Loading, Notice } from './ui.js';

/** How a change ended: saved, or refused because the resource changed since it was read. */
export type EditOutcome = 'saved' | 'stale';

/**
 * What the form is given: the resource and its tag, and `done` to call when a change ended (the
 * resource is then read again); `done()` without an outcome clears the notice as a new try starts.
 * `said`: what to confirm instead of "Saved." (a change of status says which).
 */
export type EditorForm<T> = (resource: Tagged<T>, done: (outcome?: EditOutcome, said?: string) => void) => ComponentChildren;

export function TaggedEditor<T>({ load, deps, onStale, children }: { load: () => Promise<Tagged<T>>; deps: unknown[]; onStale?: () => void; children: EditorForm<T> }) {
  const { t } = useI18n();
  const resource = useLoad(load, deps);
  // Kept here: the form below is rebuilt from the resource as saved after each change.
  const [outcome, setOutcome] = useState<{ ended: EditOutcome; said: string | undefined } | undefined>();
  if (resource.error) return <ErrorMessage error={resource.error} onRetry={resource.reload} />;
  if (!resource.data) return <Loading />;
  const done = (ended?: EditOutcome, said?: string) => {
    setOutcome(ended ? { ended, said } : undefined);
    if (!ended) return;
    resource.reload();
    if (ended === 'stale') onStale?.();
  };
  // The notice comes with the form rebuilt from the resource as it now is, not before: what it
  // confirms is what the form shows.
  const settled = outcome && !resource.loading ? outcome : undefined;
  return (
    <>
      {settled?.ended === 'saved' && <Notice tone="success">{settled.said ?? t('common.saved')}</Notice>}
      {settled?.ended === 'stale' && <Notice tone="warning">{t('common.changedMeanwhile')}</Notice>}
      {/* A new tag is a new form: its fields start again from the resource as it now is. */}
      <Fragment key={resource.data.etag}>{children(resource.data, done)}</Fragment>
    </>
  );
}

/** Runs a change; a 412 (changed by someone else since it was read) ends it as `stale` instead of an error. */
export async function unlessStale(action: () => Promise<void>, done: (outcome: EditOutcome) => void): Promise<void> {
  try {
    await action();
  } catch (err) {
    if (changedMeanwhile(err)) return done('stale');
    throw err;
  }
}
