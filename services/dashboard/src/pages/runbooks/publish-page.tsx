import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { apiFetch, apiSend, type ApiError, type ProblemItem } from "../../api/client.ts";
import { asApiError } from "../../api/use-resource.ts";
import { hasRoleOrAbove, type Session } from "../../auth/session.ts";
import { CodeEditor, type CodeEditorHandle } from "../../components/code-editor.tsx";
import { navigate } from "../../router.ts";
import type { Runbook, RunbookWithYaml } from "./runbook-types.ts";
import "./runbooks.css";

/**
 * #/publish[/:name]: edit or paste a runbook's YAML (prefilled with the active version of
 * `name`) and publish it as the next version. The API checks the whole runbook at once; every
 * problem it names is marked at its line in the editor and listed with a link to the line.
 */
export function PublishPage(props: { name: string | undefined; session: Session }) {
  const [yaml, setYaml] = useState("");
  const [overdueBehavior, setOverdueBehavior] = useState<"rerun" | "ignore">("rerun");
  const [rerunInit, setRerunInit] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const editor = useRef<CodeEditorHandle | undefined>(undefined);
  const setEditor = useCallback((handle: CodeEditorHandle) => (editor.current = handle), []);

  useEffect(() => {
    if (props.name === undefined) return;
    apiFetch<RunbookWithYaml>(`/runbooks/${encodeURIComponent(props.name)}`).then(
      (runbook) => {
        setYaml(runbook.yamlContent);
        setOverdueBehavior(runbook.overdueBehavior);
        setRerunInit(runbook.rerunInit);
      },
      (caught: unknown) => setError(asApiError(caught)),
    );
  }, [props.name]);

  if (!hasRoleOrAbove(props.session, "Admin")) {
    return (
      <section>
        <h1 tabIndex={-1}>Publish a runbook</h1>
        <p>
          Publishing needs the Admin role; you are signed in as {props.session.roles.join(", ") || "no role"}.
        </p>
      </section>
    );
  }

  const problems: readonly ProblemItem[] = error?.details.problems ?? [];
  const marks = problems.flatMap((problem) =>
    problem.line === undefined ? [] : [{ line: problem.line, message: problem.message }],
  );

  const loadFile = async (file: File | undefined) => {
    if (file === undefined) return;
    setYaml(await file.text());
    setError(undefined);
  };

  const publish = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const runbook = await apiSend<Runbook>("POST", "/runbooks", { yaml, overdueBehavior, rerunInit });
      navigate({ page: "runbook", name: runbook.name });
    } catch (caught) {
      const apiError = asApiError(caught);
      setError(apiError);
      const first = apiError.details.problems?.find((problem) => problem.line !== undefined);
      if (first?.line !== undefined) editor.current?.goToLine(first.line, first.column);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <p class="breadcrumb">
        <a href="#/runbooks">Runbooks</a> /{" "}
        {props.name !== undefined && (
          <a href={`#/runbooks/${encodeURIComponent(props.name)}`}>{props.name}</a>
        )}
      </p>
      <h1 tabIndex={-1}>
        {props.name === undefined ? "Publish a runbook" : `Publish a new version of ${props.name}`}
      </h1>
      <form class="publish-form" onSubmit={(event) => void publish(event)}>
        <div class="toolbar">
          <div>
            <label for="runbook-file">Load a YAML file</label>
            <input
              id="runbook-file"
              type="file"
              accept=".yaml,.yml,application/yaml,text/yaml"
              onChange={(event) => void loadFile(event.currentTarget.files?.[0])}
            />
          </div>
          <div>
            <label for="overdue">Overdue phases</label>
            <select
              id="overdue"
              value={overdueBehavior}
              onChange={(event) => setOverdueBehavior(event.currentTarget.value as "rerun" | "ignore")}
            >
              <option value="rerun">run them late</option>
              <option value="ignore">skip them</option>
            </select>
          </div>
          <div class="checkbox">
            <input
              id="rerun-init"
              type="checkbox"
              checked={rerunInit}
              onChange={(event) => setRerunInit(event.currentTarget.checked)}
            />
            <label for="rerun-init">Run init again for members added later</label>
          </div>
        </div>
        <label for="runbook-yaml">Runbook YAML</label>
        <CodeEditor
          id="runbook-yaml"
          value={yaml}
          onInput={(value) => setYaml(value)}
          marks={marks}
          describedBy={error === undefined ? undefined : "publish-problems"}
          handle={setEditor}
        />
        {error !== undefined && (
          <div id="publish-problems" class="error-box" role="alert" data-testid="publish-error">
            <strong>Not published</strong>
            {problems.length === 0 ? (
              <>
                : {error.message} <code>{error.code}</code>
              </>
            ) : (
              <>
                {" "}
                — {problems.length} problem{problems.length === 1 ? "" : "s"} <code>{error.code}</code>
                <ul class="problem-list">
                  {problems.map((problem, index) => (
                    <li key={index}>
                      {problem.line !== undefined ? (
                        <button
                          type="button"
                          class="link"
                          onClick={() => editor.current?.goToLine(problem.line ?? 1, problem.column)}
                        >
                          Line {problem.line}
                          {problem.column !== undefined && `, column ${problem.column}`}
                        </button>
                      ) : null}{" "}
                      {problem.path !== undefined && problem.path !== "" && <code>{problem.path}</code>}{" "}
                      {problem.message}
                    </li>
                  ))}
                </ul>
              </>
            )}
          </div>
        )}
        <div class="form-actions">
          <button type="submit" class="primary" disabled={busy || yaml.trim() === ""}>
            {busy ? "Publishing…" : "Publish"}
          </button>
          <a
            class="button"
            href={props.name === undefined ? "#/runbooks" : `#/runbooks/${encodeURIComponent(props.name)}`}
          >
            Back
          </a>
        </div>
      </form>
    </section>
  );
}
