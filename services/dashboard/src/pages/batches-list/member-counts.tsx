import { useEffect, useState } from "preact/hooks";
import { apiFetch } from "../../api/client.ts";
import { formatCount } from "../../components/format.ts";
import type { BatchCounts } from "./batch-list-types.ts";

/**
 * The list endpoint carries no member counts, so each visible row asks its batch (one small
 * request per row of a 25-row page). "—" until it answers or if it fails: the counts are extra.
 */
export function MemberCounts(props: {
  readonly batchId: number;
  /** Changes (a new list answer) make the counts load again. */
  readonly refresh: unknown;
}) {
  const [counts, setCounts] = useState<Readonly<Record<string, number>> | undefined>(undefined);
  useEffect(() => {
    let current = true;
    apiFetch<BatchCounts>(`/batches/${props.batchId}`).then(
      (batch) => current && setCounts(batch.memberCounts),
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [props.batchId, props.refresh]);
  if (counts === undefined) return <span class="hint">—</span>;
  const total = Object.values(counts).reduce((sum, value) => sum + value, 0);
  const failed = counts.failed ?? 0;
  const removed = counts.removed ?? 0;
  return (
    <span data-testid={`member-counts-${props.batchId}`}>
      {formatCount(total)}
      {failed > 0 && <span class="count-failed"> · {formatCount(failed)} failed</span>}
      {removed > 0 && <span class="hint"> · {formatCount(removed)} removed</span>}
    </span>
  );
}
