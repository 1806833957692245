import { useState } from "preact/hooks";
import { useResource } from "../../api/use-resource.ts";
import { ApiErrorBox, Loading } from "../../components/api-error-box.tsx";
import { formatTime } from "../../components/format.ts";
import { StatusBadge } from "../../components/status-badge.tsx";
import type { MemberBatch } from "./batch-list-types.ts";

/** More than this many memberships of one key is not a search result but a data problem. */
const LIMIT = 100;

/**
 * "Where is user X?" (issue 31): every batch a member key is or was in (GET /api/members?key=),
 * the whole key, case ignored. The key is kept in this component only, never in the URL: a
 * person's UPN does not belong in browser history or in a link pasted into a chat.
 */
export function MemberSearch() {
  const [draft, setDraft] = useState("");
  const [key, setKey] = useState("");
  const found = useResource<MemberBatch[]>(
    key === "" ? undefined : `/members?${new URLSearchParams({ key, limit: String(LIMIT) }).toString()}`,
  );
  return (
    <div class="card member-search">
      <form
        role="search"
        aria-label="Search a member across batches"
        onSubmit={(event) => {
          event.preventDefault();
          setKey(draft.trim());
        }}
      >
        <label for="member-key">Find a member</label>
        <input
          id="member-key"
          type="search"
          placeholder="member key, e.g. adele@contoso.com"
          autocomplete="off"
          value={draft}
          onInput={(event) => setDraft(event.currentTarget.value)}
        />
        <button type="submit" disabled={draft.trim() === ""}>
          Find
        </button>
        {key !== "" && (
          <button
            type="button"
            onClick={() => {
              setDraft("");
              setKey("");
            }}
          >
            Clear
          </button>
        )}
      </form>
      {found.error !== undefined && <ApiErrorBox error={found.error} title="Could not search" />}
      {key !== "" && found.data === undefined && found.loading && <Loading what="batches of this member" />}
      {key !== "" && found.data !== undefined && found.data.length === 0 && (
        <p data-testid="member-search-empty">This key is in no batch.</p>
      )}
      {key !== "" && found.data !== undefined && found.data.length > 0 && (
        <table class="data" aria-label="Batches of this member">
          <thead>
            <tr>
              <th scope="col">Batch</th>
              <th scope="col">Runbook</th>
              <th scope="col">Batch status</th>
              <th scope="col">Member</th>
              <th scope="col">Member status</th>
              <th scope="col" class="wide-only">
                Added
              </th>
              <th scope="col" class="wide-only">
                Removed
              </th>
              <th scope="col">Ref</th>
            </tr>
          </thead>
          <tbody>
            {found.data.map((row) => (
              <tr key={row.memberId} data-testid={`member-batch-${row.batchId}`}>
                <td>
                  <a href={`#/batches/${row.batchId}`}>#{row.batchId}</a>
                </td>
                <td>
                  {row.runbookName} <span class="hint">v{row.runbookVersion}</span>
                </td>
                <td>
                  <StatusBadge status={row.batchStatus} />
                </td>
                <td>{row.memberKey}</td>
                <td>
                  <StatusBadge status={row.memberStatus} />
                  {typeof row.erasedAt === "string" && <span class="hint"> data erased</span>}
                </td>
                <td class="wide-only">{formatTime(row.addedAt)}</td>
                <td class="wide-only">{formatTime(row.removedAt)}</td>
                <td>{row.externalRef ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
