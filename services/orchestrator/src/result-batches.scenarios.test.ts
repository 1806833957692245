import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkerResultMessage } from "@matoolkit/domain";
import { processWorkerResults } from "./orchestrator-service.ts";
import {
  eventually,
  membersWith,
  phaseDueBody,
  publishEvent,
  runbookYaml,
  seedBatch,
  startHarness,
  type Harness,
} from "../test/test-harness.ts";
import { batchStatus, memberStatuses, stepOf, stepsOf, transitionsOf } from "../test/test-queries.ts";

/**
 * Results are processed in batches (one transaction, set-based transitions): a batch that mixes
 * completions, a duplicate, a stale attempt and a failure must end exactly as if each result had
 * been processed alone.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  h.open("batched-results");
  await h?.stop();
});

describe("a batch of worker results", () => {
  it("moves each step once, dispatches each next step once, ignores stale results and fails only the failed member", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: held
        worker_id: worker-01
        function: Hold
        params:
          Gate: batched-results
      - name: second
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
`);
    const batch = await seedBatch(h.db, yaml, membersWith(6));
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    const dispatched = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps.filter((step) => step.stepIndex === 0 && step.status === "dispatched").length === 6,
      "every first step to be dispatched",
    );
    const first = (member: number) => stepOf(dispatched, `m${member}@contoso.test`, 0);
    const result = (member: number, overrides: Partial<WorkerResultMessage> = {}): WorkerResultMessage => ({
      JobId: `step-${first(member).id}`,
      Status: "Success",
      Result: { complete: true, data: { Member: member } },
      Error: null,
      CorrelationData: {
        StepExecutionId: first(member).id,
        IsInitStep: false,
        RunbookName: batch.runbookName,
        RunbookVersion: batch.runbookVersion,
      },
      ...overrides,
    });

    await processWorkerResults(h.orchestrator, [
      result(0),
      result(1),
      result(1),
      result(2, { JobId: `step-${first(2).id}-retry-7` }),
      result(3, { Status: "Failure", Result: null, Error: { Message: "mailbox not found" } }),
      result(4),
      result(5),
    ]);

    const after = await stepsOf(h.db, batch.batchId);
    for (const member of [0, 1, 4, 5]) {
      const step0 = stepOf(after, `m${member}@contoso.test`, 0);
      expect(step0.status).toBe("succeeded");
      expect(step0.resultJson).toEqual({ complete: true, data: { Member: member } });
      expect(await transitionsOf(h.db, "step", step0.id)).toEqual([
        "pending→dispatched",
        "dispatched→succeeded",
      ]);
      const step1 = stepOf(after, `m${member}@contoso.test`, 1);
      expect(["dispatched", "succeeded"]).toContain(step1.status);
      expect(step1.jobId).toBe(`step-${step1.id}`);
    }
    // The result of an attempt that is not the current one moved nothing.
    expect(stepOf(after, "m2@contoso.test", 0).status).toBe("dispatched");
    expect(stepOf(after, "m2@contoso.test", 1).status).toBe("pending");
    // The failure took its own path: no retries, so the member failed and its next step was cancelled.
    expect(stepOf(after, "m3@contoso.test", 0)).toMatchObject({
      status: "failed",
      errorCode: "worker.error",
    });
    expect(stepOf(after, "m3@contoso.test", 1).status).toBe("cancelled");
    expect((await memberStatuses(h.db, batch.batchId))["m3@contoso.test"]).toBe("failed");

    // The worker's own answers for the held jobs now come late and change nothing but m2.
    h.open("batched-results");
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "the batch to complete",
    );
    const done = await stepsOf(h.db, batch.batchId);
    const second = done.filter((step) => step.stepIndex === 1);
    const secondIds = new Set(second.map((step) => step.id));
    const secondJobs = h.calls.filter((call) => !call.isInitStep && secondIds.has(call.stepExecutionId));
    // Each second step ran exactly once (m3's was cancelled and never sent).
    expect(secondJobs.map((call) => call.jobId).sort()).toEqual(
      second
        .filter((step) => step.status === "succeeded")
        .map((step) => `step-${step.id}`)
        .sort(),
    );
    expect(second.filter((step) => step.status === "succeeded")).toHaveLength(5);
  });
});
