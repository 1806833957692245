import { useState } from "preact/hooks";
import { apiSend, type ApiError } from "../../api/client.ts";
import { asApiError } from "../../api/use-resource.ts";
import { navigate } from "../../router.ts";
import type { CreatedBatch } from "./batch-list-types.ts";

/**
 * Creates a manual batch from a CSV file (the runbook's template filled with members). The API
 * lists CSV mistakes by line; the same file uploaded twice within minutes is refused as a double
 * submit, which this form offers to override after the user sees the existing batch.
 */
export function CreateBatchForm(props: {
  readonly runbooks: readonly string[];
  readonly initialRunbook: string | undefined;
  readonly onClose: () => void;
}) {
  const [runbook, setRunbook] = useState(props.initialRunbook ?? props.runbooks[0] ?? "");
  const [file, setFile] = useState<File | undefined>(undefined);
  const [externalRef, setExternalRef] = useState("");
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const create = async (allowDuplicate: boolean) => {
    if (file === undefined || runbook === "") return;
    setBusy(true);
    setError(undefined);
    try {
      const query = new URLSearchParams({ runbook });
      if (allowDuplicate) query.set("allowDuplicate", "true");
      if (externalRef.trim() !== "") query.set("externalRef", externalRef.trim());
      const batch = await apiSend<CreatedBatch>("POST", `/batches?${query.toString()}`, await file.text(), {
        "Content-Type": "text/csv",
      });
      navigate({ page: "batch", batchId: batch.id });
    } catch (caught) {
      setError(asApiError(caught));
    } finally {
      setBusy(false);
    }
  };

  const existing = error?.details.existingBatchId;
  const problems = error?.details.problems ?? [];
  return (
    <form
      class="card create-batch"
      aria-labelledby="create-batch-title"
      onSubmit={(event) => {
        event.preventDefault();
        void create(false);
      }}
    >
      <h2 id="create-batch-title">Create a batch from a CSV file</h2>
      <p class="hint">
        One member per line under the runbook's header row (download it from the runbook page). The batch
        starts waiting; advance it from its page.
      </p>
      <div class="toolbar">
        <div>
          <label for="create-runbook">Runbook</label>
          <select
            id="create-runbook"
            value={runbook}
            onChange={(event) => setRunbook(event.currentTarget.value)}
          >
            {props.runbooks.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="create-csv">Members CSV</label>
          <input
            id="create-csv"
            type="file"
            accept=".csv,text/csv"
            onChange={(event) => {
              setFile(event.currentTarget.files?.[0]);
              setError(undefined);
            }}
          />
        </div>
        <div>
          <label for="create-external-ref">Change ticket (optional)</label>
          <input
            id="create-external-ref"
            type="text"
            maxLength={128}
            placeholder="e.g. CHG0012345"
            value={externalRef}
            onInput={(event) => setExternalRef(event.currentTarget.value)}
          />
        </div>
      </div>
      {error !== undefined && (
        <div class="error-box" role="alert" data-testid="create-batch-error">
          <strong>No batch created</strong>: {error.message} <code>{error.code}</code>
          {problems.length > 0 && (
            <ul>
              {problems.map((problem, index) => (
                <li key={index}>
                  {problem.line !== undefined && <>Line {problem.line}: </>}
                  {problem.message}
                </li>
              ))}
            </ul>
          )}
          {typeof existing === "number" && (
            <p>
              <a href={`#/batches/${existing}`}>Open batch #{existing}</a>, or{" "}
              <button type="button" onClick={() => void create(true)} disabled={busy}>
                create another batch anyway
              </button>
            </p>
          )}
        </div>
      )}
      <div class="form-actions">
        <button type="submit" class="primary" disabled={busy || file === undefined || runbook === ""}>
          {busy ? "Creating…" : "Create batch"}
        </button>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
    </form>
  );
}
