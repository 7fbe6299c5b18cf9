// Loads data for a page: loading, error and reload, dropping answers that arrive after the page changed.
import { useEffect, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, error: null, loading: true }));
    load()
      .then((data) => current && setState({ data, error: null, loading: false }))
      .catch((error: unknown) => current && setState({ data: undefined, error, loading: false }));
    return () => {
      current = false;
    };
  }, [...deps, attempt]);
  return { ...state, reload: () => setAttempt((n) => n + 1) };
}

/** A form's submission: busy while it runs, the error it ended with (cleared on the next try). */
export function useSubmit(action: () => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, submit };
}
