import type { WorkerPacing } from "./pacing-api.ts";
import { pacingLines } from "./pacing-wording.ts";

/**
 * Issue 30: how fast the worker lets jobs start and how many tenant calls it has out, beside the
 * progress chart (the throughput a batch gets is what this allows). Read with the batch on each
 * tick; the API shows only the workers of its own process, so on a split deployment it says
 * where to look instead (the worker's `/metrics`).
 */
export function PacingIndicator(props: {
  readonly previous: WorkerPacing | undefined;
  readonly current: WorkerPacing | undefined;
}) {
  if (props.current === undefined) return null;
  const lines = pacingLines(props.previous, props.current);
  return (
    <section class="batch-section pacing" aria-labelledby="pacing-title" data-testid="worker-pacing">
      <h2 id="pacing-title">Worker pacing</h2>
      {lines.length === 0 ? (
        <p class="muted">The workers run in other processes: their pacing is on their /metrics.</p>
      ) : (
        <ul class="pacing-list">
          {lines.map((line) => (
            <li key={line.workerId} data-worker={line.workerId} data-lowered={line.lowered}>
              <strong>{line.workerId}</strong>{" "}
              <span class={line.lowered ? "badge badge-warning" : undefined}>{line.starts}</span>
              <br />
              <span class="muted">{line.calls}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
