import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { reasonCodes, topics, type WorkerJobMessage } from "@matoolkit/domain";
import {
  eventually,
  membersWith,
  phaseDueBody,
  publishEvent,
  runbookYaml,
  seedBatch,
  startHarness,
  WORKER_ID,
  type Harness,
  type SeededBatch,
} from "../test/test-harness.ts";
import { batchStatus, memberStatuses, stepOf, stepsOf } from "../test/test-queries.ts";

/**
 * Issue 11: the worker running a step is killed mid-job. Its job message comes back (the bus
 * lock expired) and its claim's lease has run out: the step fails as `worker.lost` and follows
 * the runbook's retry policy like any failure, instead of staying dispatched until the stuck-step
 * timeout. The death is staged on the real harness: the running job's claim is handed to an
 * owner that no longer renews it, and the job message is delivered again.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

let gates = 0;

async function killWorkerMidStep(batch: SeededBatch, gate: string): Promise<number> {
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
  const call = await eventually(
    () => Promise.resolve(h.calls.find((c) => c.params.Gate === gate)),
    (found) => found !== undefined,
    "the step's function to be running",
  );
  const running = call!;
  // The owner is gone: its lease lapsed, nobody renews it (the in-process run is now an orphan).
  await sql`
    UPDATE idempotency_keys SET owner = 'killed-worker', lease_expires_at = now() - interval '1 second'
    WHERE key = ${`worker-job:${running.jobId}`}`.execute(h.db);
  const job: WorkerJobMessage = {
    JobId: running.jobId,
    BatchId: batch.batchId,
    WorkerId: WORKER_ID,
    FunctionName: "Hold",
    Parameters: running.params,
    CorrelationData: {
      StepExecutionId: running.stepExecutionId,
      IsInitStep: false,
      RunbookName: batch.runbookName,
      RunbookVersion: batch.runbookVersion,
    },
  };
  // What the bus does once the dead consumer's lock expires: the same job, delivered again.
  await h.bus.publish({
    id: `redelivery:${running.jobId}`,
    topic: topics.workerJobs,
    body: job,
    properties: { WorkerId: WORKER_ID },
  });
  return running.stepExecutionId;
}

function yamlWith(gate: string, retry: string): string {
  return runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: welcome
        worker_id: worker-01
        function: Hold
        params:
          Gate: ${gate}
${retry}`);
}

async function reasonsOf(stepId: number): Promise<Array<string | null>> {
  const rows = await h.db
    .selectFrom("events")
    .select("reason")
    .where("entity", "=", "step")
    .where("entityId", "=", stepId)
    .orderBy("id")
    .execute();
  return rows.map((row) => row.reason);
}

describe("a step whose worker was lost", () => {
  it("is retried under the runbook's retry policy, and the retry succeeds", async () => {
    const gate = `lost-${++gates}`;
    const retry = `        retry:\n          max_retries: 1\n          interval: 1s`;
    const batch = await seedBatch(h.db, yamlWith(gate, retry), membersWith(1));
    const stepId = await killWorkerMidStep(batch, gate);

    await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps[0]?.retryCount === 1,
      "the lost step to be retried",
    );
    h.open(gate);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to end",
    );

    const step = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    expect(step).toMatchObject({ id: stepId, status: "succeeded", retryCount: 1 });
    expect(await reasonsOf(stepId)).toContain(reasonCodes.workerLost);
  });

  it("fails its member as worker.lost when the runbook allows no retry", async () => {
    const gate = `lost-${++gates}`;
    const batch = await seedBatch(h.db, yamlWith(gate, ""), membersWith(1));
    const stepId = await killWorkerMidStep(batch, gate);

    await eventually(
      () => memberStatuses(h.db, batch.batchId),
      (statuses) => Object.values(statuses).includes("failed"),
      "the member to fail",
    );
    h.open(gate);
    const step = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    expect(step).toMatchObject({
      id: stepId,
      status: "failed",
      errorCode: reasonCodes.workerLost,
      retryCount: 0,
    });
  });
});
