import { useResource } from "../../api/use-resource.ts";
import { hasRoleOrAbove, type Session } from "../../auth/session.ts";
import { ApiErrorBox, Loading } from "../../components/api-error-box.tsx";
import { formatTime } from "../../components/format.ts";
import { runbookHref, type Runbook } from "./runbook-types.ts";
import "./runbooks.css";

/** #/runbooks: the active version of every runbook; Admins can publish a new one. */
export function RunbooksPage(props: { session: Session }) {
  const runbooks = useResource<Runbook[]>("/runbooks");
  const canPublish = hasRoleOrAbove(props.session, "Admin");
  return (
    <section>
      <div class="page-head">
        <h1 tabIndex={-1}>Runbooks</h1>
        {canPublish && (
          <a class="button primary" href="#/publish">
            Publish a runbook
          </a>
        )}
      </div>
      {runbooks.error !== undefined && <ApiErrorBox error={runbooks.error} title="Could not list runbooks" />}
      {runbooks.data === undefined && runbooks.loading && <Loading what="runbooks" />}
      {runbooks.data !== undefined && runbooks.data.length === 0 && (
        <div class="card">
          <p>No runbook is published yet.</p>
          {canPublish && (
            <p>
              <a href="#/publish">Publish one</a>, or run{" "}
              <code>npx matoolkit runbook publish examples/contoso-pilot.yaml</code>.
            </p>
          )}
        </div>
      )}
      {runbooks.data !== undefined && runbooks.data.length > 0 && (
        <table class="data" aria-label="Runbooks">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col" class="num">
                Version
              </th>
              <th scope="col" class="wide-only">
                Overdue phases
              </th>
              <th scope="col">Published</th>
              <th scope="col">Scheduler</th>
            </tr>
          </thead>
          <tbody>
            {runbooks.data.map((runbook) => (
              <tr key={runbook.id}>
                <td>
                  <a href={runbookHref(runbook.name)}>{runbook.name}</a>
                </td>
                <td class="num">v{runbook.version}</td>
                <td class="wide-only">{runbook.overdueBehavior === "rerun" ? "run late" : "skip"}</td>
                <td>{formatTime(runbook.createdAt)}</td>
                <td>
                  {runbook.lastError === null ? (
                    <span class="hint">ok</span>
                  ) : (
                    <span class="error-text" title={`since ${formatTime(runbook.lastErrorAt)}`}>
                      {runbook.lastError}
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
