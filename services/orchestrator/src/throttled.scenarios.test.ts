import { afterAll, beforeAll, expect, it } from "vitest";
import {
  deliverResult,
  eventually,
  membersWith,
  phaseDueBody,
  publishEvent,
  runbookYaml,
  seedBatch,
  startHarness,
  type Harness,
} from "../test/test-harness.ts";
import { stepsOf, transitionsOf } from "../test/test-queries.ts";

/**
 * A worker that stays throttled (HTTP 429 past its in-runspace retries) reports the failure with
 * IsThrottled and its reason code; the orchestrator stores the code and retries like any failure.
 * The worker here never answers on its own (Hold on a closed gate): the test scripts its answers.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

it("stores the throttling reason code, retries the step, and succeeds on the retry", async () => {
  const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: call-graph
        worker_id: worker-01
        function: Hold
        params:
          Gate: never-opened
        retry:
          max_retries: 1
          interval: 1s
`);
  const batch = await seedBatch(h.db, yaml, membersWith(1));
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
  const [dispatched] = await eventually(
    () => stepsOf(h.db, batch.batchId),
    (steps) => steps[0]?.status === "dispatched",
    "the step to be dispatched",
  );
  const id = dispatched!.id;
  const correlation = {
    StepExecutionId: id,
    IsInitStep: false,
    RunbookName: batch.runbookName,
    RunbookVersion: batch.runbookVersion,
  };
  await deliverResult(h.orchestrator, {
    JobId: `step-${id}`,
    Status: "Failure",
    Result: null,
    Error: {
      Message: "Too many requests to graph.microsoft.com",
      Type: "worker.throttled",
      IsThrottled: true,
      Attempts: 5,
    },
    CorrelationData: correlation,
  });
  const [failedOnce] = await stepsOf(h.db, batch.batchId);
  expect(failedOnce).toMatchObject({ status: "pending", retryCount: 1, errorCode: "worker.throttled" });

  await eventually(
    () => stepsOf(h.db, batch.batchId),
    (steps) => steps[0]?.status === "dispatched" && steps[0]?.jobId === `step-${id}-retry-1`,
    "the retry to be dispatched after its interval",
  );
  await deliverResult(h.orchestrator, {
    JobId: `step-${id}-retry-1`,
    Status: "Success",
    Result: { complete: true, data: {} },
    Error: null,
    CorrelationData: correlation,
  });
  const [done] = await stepsOf(h.db, batch.batchId);
  expect(done?.status).toBe("succeeded");
  expect(await transitionsOf(h.db, "step", id)).toEqual([
    "pending→dispatched",
    "dispatched→failed",
    "failed→pending",
    "pending→dispatched",
    "dispatched→succeeded",
  ]);
});

it("falls back on graph.throttled when a PowerShell worker reports a .NET exception type with IsThrottled", async () => {
  const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: call-graph
        worker_id: worker-01
        function: Hold
        params:
          Gate: never-opened-either
`);
  const batch = await seedBatch(h.db, yaml, membersWith(1));
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
  const [dispatched] = await eventually(
    () => stepsOf(h.db, batch.batchId),
    (steps) => steps[0]?.status === "dispatched",
    "the step to be dispatched",
  );
  await deliverResult(h.orchestrator, {
    JobId: `step-${dispatched!.id}`,
    Status: "Failure",
    Result: null,
    Error: {
      Message: "Request was throttled",
      Type: "Microsoft.Graph.ServiceException",
      IsThrottled: true,
      Attempts: 5,
    },
    CorrelationData: {
      StepExecutionId: dispatched!.id,
      IsInitStep: false,
      RunbookName: batch.runbookName,
      RunbookVersion: batch.runbookVersion,
    },
  });
  const [failed] = await stepsOf(h.db, batch.batchId);
  expect(failed).toMatchObject({ status: "failed", errorCode: "graph.throttled" });
});
