import type { ApiError } from "../api/client.ts";

/** An API error as the API worded it, with its stable code and any listed problems. */
export function ApiErrorBox(props: { readonly error: ApiError; readonly title?: string }) {
  const problems = props.error.details.problems ?? [];
  return (
    <div class="error-box" role="alert">
      <strong>{props.title ?? "The request failed"}</strong>: {props.error.message}{" "}
      <code class="error-code">{props.error.code}</code>
      {problems.length > 0 && (
        <ul>
          {problems.map((problem, index) => (
            <li key={index}>
              {problem.line !== undefined && <>Line {problem.line}: </>}
              {problem.path !== undefined && problem.path !== "" && <code>{problem.path}</code>}{" "}
              {problem.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** "Loading…" announced politely to screen readers. */
export function Loading(props: { readonly what?: string }) {
  return (
    <p class="hint" role="status">
      Loading {props.what ?? ""}…
    </p>
  );
}
