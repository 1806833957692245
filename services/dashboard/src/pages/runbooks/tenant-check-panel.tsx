import { useState } from "preact/hooks";
import { apiSend, type ApiError } from "../../api/client.ts";
import { asApiError } from "../../api/use-resource.ts";
import { ApiErrorBox } from "../../components/api-error-box.tsx";
import { formatTime } from "../../components/format.ts";
import { StatusBadge, type BadgeTone } from "../../components/status-badge.tsx";

/** POST /api/tenant/check's answer (libs/domain tenant-check: TenantCheckReport). */
interface TenantCheckReport {
  readonly tenant: string;
  readonly runbook: { readonly name: string; readonly version: number } | null;
  readonly passed: boolean;
  readonly lines: readonly {
    readonly check: string;
    readonly status: "passed" | "failed" | "warning" | "skipped";
    readonly detail: string;
    readonly missing: readonly string[];
  }[];
  readonly checkedAt: string;
}

const tones: Readonly<Record<string, BadgeTone>> = {
  passed: "success",
  failed: "danger",
  warning: "warning",
  skipped: "neutral",
};

/**
 * The pre-flight check of the worker's tenant for this runbook (docs/worker-and-tenant.md):
 * tokens, granted permissions, Exchange role, B2B policy, verified domains, each line with what
 * is missing. Reads only. Operator and Admin (the API checks the role too).
 */
export function TenantCheckPanel(props: { readonly name: string }) {
  const [report, setReport] = useState<TenantCheckReport | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setReport(
        await apiSend<TenantCheckReport>("POST", `/tenant/check?runbook=${encodeURIComponent(props.name)}`),
      );
    } catch (caught) {
      setError(asApiError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="card">
      <h2>Tenant check</h2>
      <p class="hint">
        Asks the worker's tenant whether this runbook's functions can run: tokens, permissions, Exchange role,
        B2B invitations, verified domains. Nothing is changed.
      </p>
      <button type="button" onClick={() => void run()} disabled={busy}>
        {busy ? "Checking the tenant…" : report === undefined ? "Check the tenant" : "Check again"}
      </button>
      {error !== undefined && <ApiErrorBox error={error} title="The check could not run" />}
      {report !== undefined && (
        <div data-testid="tenant-check">
          <p role="status">
            <StatusBadge
              status={report.passed ? "passed" : "failed"}
              tone={report.passed ? "success" : "danger"}
            />{" "}
            {report.tenant}, {formatTime(report.checkedAt)}
          </p>
          <table class="data" aria-label="Tenant check">
            <thead>
              <tr>
                <th scope="col">Check</th>
                <th scope="col">Status</th>
                <th scope="col">Missing</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {report.lines.map((line) => (
                <tr key={line.check}>
                  <td>
                    <code>{line.check}</code>
                  </td>
                  <td>
                    <StatusBadge status={line.status} tone={tones[line.status] ?? "neutral"} />
                  </td>
                  <td>{line.missing.join(", ")}</td>
                  <td>{line.detail}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
