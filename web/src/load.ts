// Loads data for a page: loading, error and reload, dropping answers that arrive after the page changed.
import { useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [attempt, setAttempt] = useState(0);
  // Which question the data answers (the dependencies and the attempt, compared as the effect
  // compares them): from the render that asks a new one, `loading` is true, so no render shows
  // the old data as the answer to the new question.
  const asked = useRef<{ deps: unknown[]; question: number }>({ deps: [], question: 0 });
  const now = [...deps, attempt];
  if (asked.current.question === 0 || now.length !== asked.current.deps.length || now.some((d, i) => !Object.is(d, asked.current.deps[i]))) {
    asked.current = { deps: now, question: asked.current.question + 1 };
  }
  const question = asked.current.question;
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean; answers: number | null }>({ data: undefined, error: null, loading: true, answers: null });
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, error: null, loading: true }));
    load()
      .then((data) => current && setState({ data, error: null, loading: false, answers: question }))
      .catch((error: unknown) => current && setState({ data: undefined, error, loading: false, answers: question }));
    return () => {
      current = false;
    };
  }, [question]);
  return { data: state.data, error: state.error, loading: state.loading || state.answers !== question, reload: () => setAttempt((n) => n + 1) };
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
