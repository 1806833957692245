import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timeOutStuckExecutions } from "./stuck-executions.ts";
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
import {
  annotationsOf,
  batchStatus,
  memberStatuses,
  phaseStatuses,
  secondsAfterDispatch,
  stepOf,
  stepsOf,
  transitionsOf,
} from "../test/test-queries.ts";

/** Stuck executions (issue 3 item 8): dispatched, the worker never answers. */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.stop();
});

const after = secondsAfterDispatch;

describe("stuck steps", () => {
  it("fail with worker.timeout after their timeout, are retried once, then fail the member", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: wait
        worker_id: worker-01
        function: "{{Fn}}"
        params:
          Gate: never-opened
        timeout: 30s
        retry:
          max_retries: 1
          interval: 1s
        on_failure: undo
      - name: next
        worker_id: worker-01
        function: Test-Echo
rollbacks:
  undo:
    - name: undo
      worker_id: worker-01
      function: Test-Echo
      params:
        Undo: "{{Upn}}"
`);
    // m0's worker never answers (Hold on a gate nobody opens); m1's answers at once.
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ Fn: index === 0 ? "Hold" : "Test-Echo" })),
    );
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    const steps = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (rows) =>
        rows.filter((s) => s.memberKey === "m1@contoso.test").every((s) => s.status === "succeeded") &&
        rows.find((s) => s.memberKey === "m0@contoso.test" && s.stepIndex === 0)?.status === "dispatched",
      "m1 to finish and m0 to wait on its worker",
    );
    const first = stepOf(steps, "m0@contoso.test", 0);
    expect(first.timeoutSec).toBe(30);

    // Within its timeout: left alone.
    expect(await timeOutStuckExecutions(h.orchestrator, after(first, 29))).toBe(0);
    expect(stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0).status).toBe("dispatched");

    // Past it: worker.timeout, and the retry config sends it again (step-{id}-retry-1).
    expect(await timeOutStuckExecutions(h.orchestrator, after(first, 31))).toBe(1);
    const retried = await eventually(
      async () => stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0),
      (step) => step.status === "dispatched" && step.jobId === `step-${first.id}-retry-1`,
      "the retry to be dispatched",
    );
    expect(retried).toMatchObject({ retryCount: 1, errorCode: "worker.timeout" });

    // The first attempt's worker answering now is stale: ignored.
    await deliverResult(h.orchestrator, {
      JobId: `step-${first.id}`,
      Status: "Success",
      Result: { complete: true, data: {} },
      Error: null,
      CorrelationData: {
        StepExecutionId: first.id,
        IsInitStep: false,
        RunbookName: batch.runbookName,
        RunbookVersion: batch.runbookVersion,
      },
    });
    expect(stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0).status).toBe("dispatched");

    // The retry gets no answer either: no retry left, so rollback and member failure.
    expect(await timeOutStuckExecutions(h.orchestrator, after(retried, 31))).toBe(1);
    const final = await stepsOf(h.db, batch.batchId);
    expect(stepOf(final, "m0@contoso.test", 0)).toMatchObject({
      status: "failed",
      errorCode: "worker.timeout",
      errorMessage: "no result from the worker within 30s of dispatch",
    });
    expect(stepOf(final, "m0@contoso.test", 1).status).toBe("cancelled");
    expect(await transitionsOf(h.db, "step", first.id)).toEqual([
      "pending→dispatched",
      "dispatched→failed",
      "failed→pending",
      "pending→dispatched",
      "dispatched→failed",
    ]);
    expect(await annotationsOf(h.db, "step", first.id)).toEqual([
      `rollback undo: step 1/1 undo sent (job rollback-step-${first.id}-1-0)`,
    ]);
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({
      "m0@contoso.test": "failed",
      "m1@contoso.test": "active",
    });
    // Completion ran as a follow-up: m1 succeeded, so the phase and the batch completed.
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed"]);
    expect(await batchStatus(h.db, batch.batchId)).toBe("completed");
    // Nothing left to time out.
    expect(await timeOutStuckExecutions(h.orchestrator, after(retried, 3600 * 24))).toBe(0);
    // Let the held worker jobs finish (their answers are stale now) so the worker stops at once.
    h.open("never-opened");
  });
});
