import { useResource } from "../../api/use-resource.ts";
import { hasRoleOrAbove, type Session } from "../../auth/session.ts";
import { ApiErrorBox, Loading } from "../../components/api-error-box.tsx";
import { formatTime } from "../../components/format.ts";
import { StatusBadge } from "../../components/status-badge.tsx";
import { hashQuery, useHash } from "../../router.ts";
import type { Runbook } from "../runbooks/runbook-types.ts";
import { filtersOf, hasFilter, listParams } from "./batch-filters.ts";
import { batchStatuses, type BatchListItem } from "./batch-list-types.ts";
import { CreateBatchForm } from "./create-batch-form.tsx";
import { MemberCounts } from "./member-counts.tsx";
import { MemberSearch } from "./member-search.tsx";
import "./batches-list.css";

const PAGE_SIZE = 25;

/**
 * #/batches[?status=&runbook=&createdBy=&createdFrom=&createdTo=&externalRef=&page=&new=1]:
 * batches newest first, filtered by status, runbook, initiator, creation days and change ticket
 * (kept in the URL so a filtered view can be bookmarked or shared; batch-filters.ts); a member
 * search box above (member-search.tsx); Admins create manual batches from a CSV file here.
 */
export function BatchesListPage(props: { session: Session }) {
  const hash = useHash();
  const query = hashQuery(hash);
  const filters = filtersOf(query);
  const { status, runbook } = filters;
  const page = Math.max(1, Number(query.get("page") ?? "1") || 1);
  const creating = query.get("new") === "1";
  const canCreate = hasRoleOrAbove(props.session, "Admin");

  const params = listParams(filters, { limit: PAGE_SIZE + 1, offset: (page - 1) * PAGE_SIZE });
  const batches = useResource<BatchListItem[]>(`/batches?${params.toString()}`);
  const runbooks = useResource<Runbook[]>("/runbooks");
  const rows = batches.data?.slice(0, PAGE_SIZE) ?? [];
  const hasMore = (batches.data?.length ?? 0) > PAGE_SIZE;

  const setQuery = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(query);
    for (const [key, value] of Object.entries(changes)) {
      if (value === undefined || value === "") next.delete(key);
      else next.set(key, value);
    }
    const text = next.toString();
    window.location.hash = `#/batches${text === "" ? "" : `?${text}`}`;
  };

  return (
    <section>
      <div class="page-head">
        <h1 tabIndex={-1}>Batches</h1>
        <div class="actions">
          <button type="button" onClick={batches.reload}>
            Refresh
          </button>
          {canCreate && !creating && (
            <button type="button" class="primary" onClick={() => setQuery({ new: "1" })}>
              Create a batch
            </button>
          )}
        </div>
      </div>
      {canCreate && creating && runbooks.data !== undefined && (
        <CreateBatchForm
          runbooks={runbooks.data.map((item) => item.name)}
          initialRunbook={runbook === "" ? undefined : runbook}
          onClose={() => setQuery({ new: undefined })}
        />
      )}
      <MemberSearch />
      <div class="toolbar" role="search" aria-label="Filter batches">
        <div>
          <label for="filter-status">Status</label>
          <select
            id="filter-status"
            value={status}
            onChange={(event) => setQuery({ status: event.currentTarget.value, page: undefined })}
          >
            <option value="">any</option>
            {batchStatuses.map((value) => (
              <option key={value} value={value}>
                {value.replace(/_/g, " ")}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="filter-runbook">Runbook</label>
          <select
            id="filter-runbook"
            value={runbook}
            onChange={(event) => setQuery({ runbook: event.currentTarget.value, page: undefined })}
          >
            <option value="">any</option>
            {runbook !== "" && !(runbooks.data ?? []).some((item) => item.name === runbook) && (
              <option value={runbook}>{runbook}</option>
            )}
            {(runbooks.data ?? []).map((item) => (
              <option key={item.name} value={item.name}>
                {item.name}
              </option>
            ))}
          </select>
        </div>
        <TextFilter
          id="filter-created-by"
          label="Created by"
          value={filters.createdBy}
          onChange={(value) => setQuery({ createdBy: value, page: undefined })}
        />
        <div>
          <label for="filter-created-from">Created from</label>
          <input
            id="filter-created-from"
            type="date"
            value={filters.createdFrom}
            onChange={(event) => setQuery({ createdFrom: event.currentTarget.value, page: undefined })}
          />
        </div>
        <div>
          <label for="filter-created-to">to</label>
          <input
            id="filter-created-to"
            type="date"
            value={filters.createdTo}
            onChange={(event) => setQuery({ createdTo: event.currentTarget.value, page: undefined })}
          />
        </div>
        <TextFilter
          id="filter-external-ref"
          label="Change ticket"
          value={filters.externalRef}
          onChange={(value) => setQuery({ externalRef: value, page: undefined })}
        />
      </div>
      {batches.error !== undefined && <ApiErrorBox error={batches.error} title="Could not list batches" />}
      {batches.data === undefined && batches.loading && <Loading what="batches" />}
      {batches.data !== undefined && rows.length === 0 && (
        <p class="card">No batch{hasFilter(filters) ? " matches these filters" : " yet"}.</p>
      )}
      {rows.length > 0 && (
        <table class="data batches" aria-label="Batches" aria-busy={batches.loading ? "true" : "false"}>
          <thead>
            <tr>
              <th scope="col">Batch</th>
              <th scope="col">Runbook</th>
              <th scope="col">Status</th>
              <th scope="col" class="wide-only">
                Phase
              </th>
              <th scope="col">Members</th>
              <th scope="col" class="wide-only">
                Start
              </th>
              <th scope="col" class="wide-only">
                Created
              </th>
              <th scope="col" class="wide-only">
                Ticket
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((batch) => (
              <tr key={batch.id} data-testid={`batch-row-${batch.id}`}>
                <td>
                  <a href={`#/batches/${batch.id}`}>#{batch.id}</a>
                </td>
                <td>
                  <a
                    href={`#/runbooks/${encodeURIComponent(batch.runbookName)}?version=${batch.runbookVersion}`}
                  >
                    {batch.runbookName}
                  </a>{" "}
                  <span class="hint">v{batch.runbookVersion}</span>
                </td>
                <td>
                  <StatusBadge status={batch.status} />{" "}
                  {batch.outcome !== null && batch.outcome !== batch.status && (
                    <StatusBadge status={batch.outcome} />
                  )}
                </td>
                <td class="wide-only">{batch.currentPhase ?? "—"}</td>
                <td>
                  <MemberCounts batchId={batch.id} counts={batch.memberCounts} />
                </td>
                <td class="wide-only">{batch.isManual ? "manual" : formatTime(batch.batchStartTime)}</td>
                <td class="wide-only">
                  {formatTime(batch.detectedAt)}
                  {batch.createdBy !== null && <span class="hint"> by {batch.createdBy}</span>}
                </td>
                <td class="wide-only">{batch.externalRef ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(page > 1 || hasMore) && (
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled={page <= 1} onClick={() => setQuery({ page: String(page - 1) })}>
            Newer
          </button>
          <span>Page {page}</span>
          <button type="button" disabled={!hasMore} onClick={() => setQuery({ page: String(page + 1) })}>
            Older
          </button>
        </nav>
      )}
    </section>
  );
}

/** A text filter applied when the field is left or Enter pressed (the change event), not per key. */
function TextFilter(props: {
  readonly id: string;
  readonly label: string;
  readonly value: string;
  readonly onChange: (value: string) => void;
}) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        type="text"
        value={props.value}
        onChange={(event) => props.onChange(event.currentTarget.value.trim())}
      />
    </div>
  );
}
