import { useCallback, useEffect, useState } from "preact/hooks";
import { apiFetch, ApiError } from "./client.ts";

export interface Resource<T> {
  readonly data: T | undefined;
  readonly error: ApiError | undefined;
  readonly loading: boolean;
  /** Fetches again, keeping the current data on screen until the answer comes. */
  readonly reload: () => void;
}

/**
 * GETs `path` (under /api) whenever it changes; `undefined` fetches nothing. An answer for a path
 * that is no longer current is dropped, so a fast filter change never shows stale rows.
 */
export function useResource<T>(path: string | undefined): Resource<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({
    loading: path !== undefined,
  });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    if (path === undefined) return;
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    apiFetch<T>(path).then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error: asApiError(error), loading: false }),
    );
    return () => {
      current = false;
    };
  }, [path, generation]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export function asApiError(error: unknown): ApiError {
  return error instanceof ApiError ? error : new ApiError(0, "client.error", String(error), {});
}
