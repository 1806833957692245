import {
  eventually,
  phaseDueBody,
  publishEvent,
  runbookYaml,
  type Harness,
  type SeededBatch,
} from "./test-harness.ts";
import { batchStatus } from "./test-queries.ts";

/**
 * What the notification scenarios (webhooks, email) share: a one-step runbook where a member
 * whose `Fails` column is "1" fails its only step (no retries) and the others succeed, and a run
 * of its phase to the batch's end.
 */
export const oneFailsRunbook = runbookYaml(`
phases:
  - name: cutover
    offset: T-0
    steps:
      - name: move
        worker_id: worker-01
        function: Test-Flaky
        params:
          FailTimes: "{{Fails}}"
`);

/** Sends the batch's first phase due and waits until the batch is completed or failed. */
export async function runBatchToEnd(h: Harness, batch: SeededBatch): Promise<void> {
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
  await eventually(
    () => batchStatus(h.db, batch.batchId),
    (status) => status === "completed" || status === "failed",
    "batch to end",
  );
}
