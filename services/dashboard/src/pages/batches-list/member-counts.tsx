import { formatCount } from "../../components/format.ts";

/** A list row's members: how many, and how many failed or were removed (GET /api/batches carries them). */
export function MemberCounts(props: {
  readonly batchId: number;
  readonly counts: Readonly<Record<string, number>>;
}) {
  const total = Object.values(props.counts).reduce((sum, value) => sum + value, 0);
  const failed = props.counts.failed ?? 0;
  const removed = props.counts.removed ?? 0;
  return (
    <span data-testid={`member-counts-${props.batchId}`}>
      {formatCount(total)}
      {failed > 0 && <span class="count-failed"> · {formatCount(failed)} failed</span>}
      {removed > 0 && <span class="hint"> · {formatCount(removed)} removed</span>}
    </span>
  );
}
