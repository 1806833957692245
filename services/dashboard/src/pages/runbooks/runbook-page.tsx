import { useState } from "preact/hooks";
import type { ApiError } from "../../api/client.ts";
import { downloadFile } from "../../api/download.ts";
import { asApiError, useResource } from "../../api/use-resource.ts";
import { hasRoleOrAbove, type Session } from "../../auth/session.ts";
import { ApiErrorBox, Loading } from "../../components/api-error-box.tsx";
import { CodeView } from "../../components/code-view.tsx";
import { formatTime } from "../../components/format.ts";
import { StatusBadge } from "../../components/status-badge.tsx";
import { hashQuery, useHash } from "../../router.ts";
import { AutomationPanel } from "./automation-panel.tsx";
import { QueryPreviewPanel } from "./query-preview-panel.tsx";
import { TenantCheckPanel } from "./tenant-check-panel.tsx";
import { runbookHref, type Runbook, type RunbookWithYaml } from "./runbook-types.ts";
import "./runbooks.css";

/**
 * #/runbooks/:name[?version=N]: every version, the YAML of the chosen one (the active one by
 * default), the automation switch and the query preview. Actions follow the role: Admins publish,
 * switch automation, preview and create batches; Readers and Operators only read.
 */
export function RunbookPage(props: { name: string; session: Session }) {
  const hash = useHash();
  const requested = Number(hashQuery(hash).get("version") ?? "") || undefined;
  const encoded = encodeURIComponent(props.name);
  const versions = useResource<Runbook[]>(`/runbooks/${encoded}/versions`);
  const shownVersion = requested ?? versions.data?.find((version) => version.isActive)?.version;
  const shown = useResource<RunbookWithYaml>(
    shownVersion === undefined ? undefined : `/runbooks/${encoded}/versions/${shownVersion}`,
  );
  const isAdmin = hasRoleOrAbove(props.session, "Admin");
  const isOperator = hasRoleOrAbove(props.session, "Operator");
  const active = versions.data?.find((version) => version.isActive);
  const [downloadError, setDownloadError] = useState<ApiError | undefined>(undefined);

  const downloadTemplate = () => {
    setDownloadError(undefined);
    const query = shownVersion === undefined ? "" : `?version=${shownVersion}`;
    downloadFile(`/runbooks/${encoded}/template${query}`, `${props.name}-template.csv`).catch(
      (error: unknown) => setDownloadError(asApiError(error)),
    );
  };

  return (
    <section>
      <p class="breadcrumb">
        <a href="#/runbooks">Runbooks</a> /
      </p>
      <div class="page-head">
        <h1 tabIndex={-1}>{props.name}</h1>
        <div class="actions">
          <button type="button" onClick={downloadTemplate}>
            Download CSV template
          </button>
          <a class="button" href={`#/batches?runbook=${encoded}`}>
            Batches
          </a>
          {isAdmin && active !== undefined && (
            <a class="button" href={`#/batches?runbook=${encoded}&new=1`}>
              Create a batch
            </a>
          )}
          {isAdmin && (
            <a class="button primary" href={`#/publish/${encoded}`}>
              Publish a new version
            </a>
          )}
        </div>
      </div>
      {downloadError !== undefined && (
        <ApiErrorBox error={downloadError} title="Could not download the template" />
      )}
      {versions.error !== undefined && (
        <ApiErrorBox error={versions.error} title="Could not read the runbook" />
      )}
      {versions.data === undefined && versions.loading && <Loading what="versions" />}
      {versions.data !== undefined && (
        <div class="runbook-layout">
          <div class="runbook-main">
            <div class="card">
              <h2>
                Version {shownVersion}
                {shown.data?.isActive === true && <StatusBadge status="active" tone="success" />}
              </h2>
              {shown.data !== undefined && (
                <p class="hint">
                  Published {formatTime(shown.data.createdAt)} · overdue phases{" "}
                  {shown.data.overdueBehavior === "rerun" ? "run late" : "are skipped"} · init{" "}
                  {shown.data.rerunInit ? "runs again for new members" : "runs once"}
                </p>
              )}
              {shown.error !== undefined && <ApiErrorBox error={shown.error} />}
              {shown.data !== undefined && shown.data.version === shownVersion && (
                <CodeView
                  text={shown.data.yamlContent}
                  label={`YAML of ${props.name} version ${shownVersion}`}
                />
              )}
            </div>
          </div>
          <div class="runbook-side">
            <div class="card">
              <h2>Versions</h2>
              <ol class="versions" reversed>
                {versions.data.map((version) => (
                  <li key={version.id}>
                    <a
                      href={runbookHref(props.name, version.version)}
                      aria-current={version.version === shownVersion ? "true" : undefined}
                    >
                      v{version.version}
                    </a>{" "}
                    {version.isActive && <StatusBadge status="active" tone="success" />}{" "}
                    <span class="hint">{formatTime(version.createdAt)}</span>
                  </li>
                ))}
              </ol>
            </div>
            {active !== undefined && <AutomationPanel name={props.name} canChange={isAdmin} />}
            {active?.lastError != null && (
              <div class="card">
                <h2>Scheduler</h2>
                <p class="error-text">{active.lastError}</p>
                <p class="hint">since {formatTime(active.lastErrorAt)}</p>
              </div>
            )}
          </div>
          {isAdmin && active !== undefined && (
            <div class="runbook-wide">
              <QueryPreviewPanel name={props.name} />
            </div>
          )}
          {isOperator && active !== undefined && (
            <div class="runbook-wide">
              <TenantCheckPanel name={props.name} />
            </div>
          )}
        </div>
      )}
    </section>
  );
}
