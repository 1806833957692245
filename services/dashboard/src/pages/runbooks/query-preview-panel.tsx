import { useState } from "preact/hooks";
import { apiSend, type ApiError } from "../../api/client.ts";
import { asApiError } from "../../api/use-resource.ts";
import { ApiErrorBox } from "../../components/api-error-box.tsx";
import { formatCount, formatTime } from "../../components/format.ts";
import { StatusBadge } from "../../components/status-badge.tsx";
import type { QueryPreview } from "./runbook-types.ts";

const PREVIEW_ROWS = 20;

/**
 * Runs the data source query and shows what the scheduler would do with the rows; nothing is
 * written. Admin only (it shows members' data), so Readers and Operators do not get the button.
 */
export function QueryPreviewPanel(props: { readonly name: string }) {
  const [preview, setPreview] = useState<QueryPreview | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setPreview(
        await apiSend<QueryPreview>(
          "POST",
          `/runbooks/${encodeURIComponent(props.name)}/query/preview?limit=${PREVIEW_ROWS}`,
        ),
      );
    } catch (caught) {
      setError(asApiError(caught));
    } finally {
      setBusy(false);
    }
  };

  const columns = preview === undefined ? [] : [...new Set(preview.rows.flatMap((row) => Object.keys(row)))];
  return (
    <div class="card">
      <h2>Query preview</h2>
      <p class="hint">
        Reads the data source now and shows the batches a scheduler tick would form. Nothing is written.
      </p>
      <button type="button" onClick={() => void run()} disabled={busy}>
        {busy ? "Reading the source…" : preview === undefined ? "Preview the query" : "Preview again"}
      </button>
      {error !== undefined && <ApiErrorBox error={error} title="The preview failed" />}
      {preview !== undefined && (
        <div class="preview" data-testid="query-preview">
          <h3>Batches</h3>
          {preview.batches.length === 0 ? (
            <p>No batch: the source returned no row that would form one.</p>
          ) : (
            <table class="data" aria-label="Batches the scheduler would form">
              <thead>
                <tr>
                  <th scope="col">Batch start</th>
                  <th scope="col" class="num">
                    Members
                  </th>
                  <th scope="col">Batch</th>
                </tr>
              </thead>
              <tbody>
                {preview.batches.map((batch) => (
                  <tr key={batch.batchStartTime}>
                    <td>{formatTime(batch.batchStartTime)}</td>
                    <td class="num">{formatCount(batch.memberCount)}</td>
                    <td>
                      {batch.batchId === null ? (
                        "new"
                      ) : (
                        <>
                          <a href={`#/batches/${batch.batchId}`}>#{batch.batchId}</a>{" "}
                          {batch.batchStatus !== null && <StatusBadge status={batch.batchStatus} />}
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {preview.rowsInManualBatches > 0 && (
            <p class="hint">
              {preview.rowsInManualBatches} row(s) left out: their members are in manual batches.
            </p>
          )}
          <h3>First {preview.rows.length} row(s) of the source</h3>
          <div class="table-scroll">
            <table class="data" aria-label="Source rows">
              <thead>
                <tr>
                  {columns.map((column) => (
                    <th scope="col" key={column}>
                      {column}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {preview.rows.map((row, index) => (
                  <tr key={index}>
                    {columns.map((column) => (
                      <td key={column}>{cellText(row[column])}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}
    </div>
  );
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}
