import { enqueueOutbox, listPollingInitsDue, listPollingStepsDue, type Db } from "@matoolkit/db";
import { selfCheckEnvelope } from "@matoolkit/domain";

/**
 * 000 "Timer Lifecycle" step 3: find polling steps and inits whose interval has elapsed
 * (last_polled_at + poll_interval_sec <= now) and send `poll-check`. The orchestrator schedules
 * its own poll-checks too; both use the same message id per poll attempt, so the bus drops the
 * second, and this sweep only matters when a scheduled check was lost.
 */
export async function sweepDuePolls(db: Db, now: Date): Promise<number> {
  const [steps, inits] = await Promise.all([listPollingStepsDue(db, now), listPollingInitsDue(db, now)]);
  const due = [
    ...steps.map((row) => ({ kind: "step" as const, row })),
    ...inits.map((row) => ({ kind: "init" as const, row })),
  ];
  if (due.length === 0) return 0;
  await enqueueOutbox(
    db,
    due.map(({ kind, row }) =>
      selfCheckEnvelope("poll-check", { kind, id: row.id }, row.pollCount + 1, undefined, row.redriveCount),
    ),
  );
  return due.length;
}
