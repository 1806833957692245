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
import { stepResult } from "../test/test-results.ts";

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
  h.open("batched-failures");
  await h?.stop();
});

/** Each step's event reasons, oldest first, as "from→to: reason". */
async function reasonsOf(stepId: number): Promise<string[]> {
  const rows = await h.db
    .selectFrom("events")
    .select(["fromStatus", "toStatus", "reason"])
    .where("entity", "=", "step")
    .where("entityId", "=", stepId)
    .orderBy("id")
    .execute();
  return rows.map((row) => `${row.fromStatus}→${row.toStatus}: ${row.reason ?? ""}`);
}

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
    const result = (member: number, overrides: Partial<WorkerResultMessage> = {}) =>
      stepResult(first(member), batch, {
        Result: { complete: true, data: { Member: member } },
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

  it("fails a batch of failures by their codes, retries those with retries left once each, and fails the member when none is left", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: held
        worker_id: worker-01
        function: Hold
        params:
          Gate: batched-failures
        retry:
          max_retries: 1
          interval: 1s
      - name: second
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
`);
    const batch = await seedBatch(h.db, yaml, membersWith(4));
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    const dispatched = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps.filter((step) => step.stepIndex === 0 && step.status === "dispatched").length === 4,
      "every first step to be dispatched",
    );
    const first = (member: number) => stepOf(dispatched, `m${member}@contoso.test`, 0);
    const failure = (member: number, jobId: string, error: WorkerResultMessage["Error"]) =>
      stepResult({ id: first(member).id, jobId }, batch, { Status: "Failure", Result: null, Error: error });
    const throttled = { Message: "429 for user@contoso.test", IsThrottled: true };
    const notFound = { Type: "graph.not_found", Message: "no such mailbox" };

    const failedAt = Date.now();
    await processWorkerResults(h.orchestrator, [
      failure(0, `step-${first(0).id}`, throttled),
      failure(0, `step-${first(0).id}`, throttled),
      failure(1, `step-${first(1).id}`, notFound),
      failure(2, `step-${first(2).id}-retry-7`, notFound),
    ]);

    const after = await stepsOf(h.db, batch.batchId);
    // Each failure moved its step once, with its own code, and sent it back to pending for its retry.
    for (const [member, code] of [
      [0, "graph.throttled"],
      [1, "graph.not_found"],
    ] as const) {
      const step = stepOf(after, `m${member}@contoso.test`, 0);
      expect(await reasonsOf(step.id)).toEqual([
        "pending→dispatched: ",
        `dispatched→failed: ${code}`,
        "failed→pending: retry 1 of 1",
      ]);
      expect(step).toMatchObject({ retryCount: 1, jobId: null, errorCode: code });
      expect(step.retryAfter!.getTime()).toBeGreaterThanOrEqual(failedAt + 1000);
    }
    // A failure of an attempt that is not the current one moved nothing.
    expect(stepOf(after, "m2@contoso.test", 0)).toMatchObject({ status: "dispatched", retryCount: 0 });

    // Each retry is dispatched once, after its interval, as the next attempt.
    const retried = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) =>
        [0, 1].every((member) => stepOf(steps, `m${member}@contoso.test`, 0).status === "dispatched"),
      "both retries to be dispatched",
    );
    for (const member of [0, 1]) {
      const step = stepOf(retried, `m${member}@contoso.test`, 0);
      expect(step.jobId).toBe(`step-${step.id}-retry-1`);
      expect(step.dispatchedAt!.getTime()).toBeGreaterThanOrEqual(step.retryAfter!.getTime());
    }

    // The retries fail too: no retry is left, so each member fails and its next step is cancelled.
    await processWorkerResults(h.orchestrator, [
      failure(0, `step-${first(0).id}-retry-1`, notFound),
      failure(1, `step-${first(1).id}-retry-1`, notFound),
    ]);
    const end = await stepsOf(h.db, batch.batchId);
    for (const member of [0, 1]) {
      const step = stepOf(end, `m${member}@contoso.test`, 0);
      expect(step).toMatchObject({ status: "failed", errorCode: "graph.not_found", retryCount: 1 });
      expect(stepOf(end, `m${member}@contoso.test`, 1).status).toBe("cancelled");
    }
    const members = await memberStatuses(h.db, batch.batchId);
    expect([members["m0@contoso.test"], members["m1@contoso.test"]]).toEqual(["failed", "failed"]);

    // The held first attempts answer late: only the members still active go on, once each.
    h.open("batched-failures");
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "the batch to complete",
    );
    const done = await stepsOf(h.db, batch.batchId);
    for (const member of [2, 3]) expect(stepOf(done, `m${member}@contoso.test`, 1).status).toBe("succeeded");
    const retryJobs = h.calls.filter((call) => call.jobId.endsWith("-retry-1"));
    expect(retryJobs.map((call) => call.jobId).sort()).toEqual(
      [0, 1].map((member) => `step-${first(member).id}-retry-1`).sort(),
    );
  });
});
