import { cancelBatch, insertMembers, listRollbacks, type Db } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkBatchCompletion } from "./completion.ts";
import {
  deliverEvent,
  deliverResult,
  eventually,
  membersWith,
  phaseDueBody,
  publishEvent,
  runbookYaml,
  seedBatch,
  startHarness,
  type Harness,
  type SeededBatch,
} from "../test/test-harness.ts";
import {
  annotationsOf,
  batchStatus,
  memberStatuses,
  phaseStatuses,
  stepOf,
  stepsOf,
  transitionsOf,
} from "../test/test-queries.ts";

/** Rollback dispatches on the timeline (issue 3 item 4) and batch cancellation (item 6). */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.stop();
});

const startPhase = (batch: SeededBatch, index = 0) =>
  publishEvent(h.bus, "phase-due", phaseDueBody(batch, index), `phase-due:${batch.phases[index]!.id}`);

async function openStepsOf(db: Db, batchId: number): Promise<string[]> {
  return (await stepsOf(db, batchId))
    .filter((step) => ["pending", "dispatched", "polling"].includes(step.status))
    .map((step) => `${step.memberKey}#${step.stepIndex}:${step.status}`);
}

describe("rollback dispatch", () => {
  it("records each rollback step on the failed step's timeline, sent with its job id or not sent and why", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: move
        worker_id: worker-01
        function: Test-Fail
        params:
          Message: "target mailbox missing"
        on_failure: alert-admins
rollbacks:
  alert-admins:
    - name: alert
      worker_id: worker-01
      function: Test-Echo
      params:
        Upn: "{{Upn}}"
    - name: open-ticket
      worker_id: worker-01
      function: Test-Echo
      params:
        Queue: "{{TicketQueue}}"
`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    await startPhase(batch);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (s) => s === "failed",
      "the batch to fail",
    );

    const step = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    const job = `rollback-step-${step.id}-0-0`;
    // Short and free of member data: names from the runbook, the job id, a reason code.
    expect(await annotationsOf(h.db, "step", step.id)).toEqual([
      `rollback alert-admins: step 1/2 alert sent (job ${job})`,
      "rollback alert-admins: step 2/2 open-ticket not sent (template.unresolved)",
    ]);
    expect(await transitionsOf(h.db, "step", step.id)).toEqual(["pending→dispatched", "dispatched→failed"]);

    // What the steps API shows for the step.
    const rollbacks = await listRollbacks(h.db, batch.batchId, { stepIds: [step.id], initIds: [] });
    expect(rollbacks.get(`step:${step.id}`)).toMatchObject({
      name: "alert-admins",
      dispatchedAt: expect.any(Date),
      steps: [
        { position: 1, stepName: "alert", jobId: job, sent: true, reason: null },
        { position: 2, stepName: "open-ticket", jobId: null, sent: false, reason: "template.unresolved" },
      ],
    });
    await eventually(
      async () => h.calls.find((call) => call.jobId === job),
      (call) => call !== undefined,
      "the rollback job to reach the worker",
    );
  });
});

describe("batch cancellation", () => {
  const holdYaml = (gate: string) =>
    runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: hold
        worker_id: worker-01
        function: Hold
        params:
          Gate: ${gate}
      - name: after
        worker_id: worker-01
        function: Test-Echo
  - name: cutover
    offset: T-0
    steps:
      - name: switch
        worker_id: worker-01
        function: Test-Echo
`);

  it("cancels mid-phase; the dispatched step's late result is ignored and nothing runs after it", async () => {
    const batch = await seedBatch(h.db, holdYaml("cancel-mid-phase"), membersWith(2));
    await startPhase(batch);
    await eventually(
      () => openStepsOf(h.db, batch.batchId),
      (open) => open.filter((entry) => entry.endsWith(":dispatched")).length === 2,
      "both members' first step to be dispatched",
    );

    const cancelled = await cancelBatch(h.db, batch.batchId, "batch.cancelled");
    expect(cancelled).toMatchObject({ batch: { status: "cancelled" } });
    expect(cancelled!.phaseIds).toEqual(batch.phases.map((phase) => phase.id));
    expect(cancelled!.stepIds).toHaveLength(4);
    expect(await batchStatus(h.db, batch.batchId)).toBe("cancelled");
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["cancelled", "cancelled"]);
    expect(await openStepsOf(h.db, batch.batchId)).toEqual([]);
    // Members did nothing wrong: they stay active.
    expect(Object.values(await memberStatuses(h.db, batch.batchId))).toEqual(["active", "active"]);

    const held = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    expect(held).toMatchObject({ status: "cancelled", jobId: `step-${held.id}` });
    expect(await transitionsOf(h.db, "step", held.id)).toEqual([
      "pending→dispatched",
      "dispatched→cancelled",
    ]);

    // The worker answers after the cancel: the terminal guard ignores it.
    await deliverResult(h.orchestrator, {
      JobId: `step-${held.id}`,
      Status: "Success",
      Result: { complete: true, data: {} },
      Error: null,
      CorrelationData: {
        StepExecutionId: held.id,
        IsInitStep: false,
        RunbookName: batch.runbookName,
        RunbookVersion: batch.runbookVersion,
      },
    });
    const after = await stepsOf(h.db, batch.batchId);
    expect(after.map((step) => step.status)).toEqual(Array(4).fill("cancelled"));
    expect(await transitionsOf(h.db, "step", held.id)).toEqual([
      "pending→dispatched",
      "dispatched→cancelled",
    ]);
    expect(h.calls.some((call) => call.stepExecutionId === stepOf(after, "m0@contoso.test", 1).id)).toBe(
      false,
    );

    // Completion never moves a cancelled batch, and a second cancel finds nothing to do.
    expect(await checkBatchCompletion(h.db, batch.batchId)).toBe(false);
    expect(await batchStatus(h.db, batch.batchId)).toBe("cancelled");
    expect(await cancelBatch(h.db, batch.batchId, "batch.cancelled")).toBeUndefined();

    // Handlers arriving late create and dispatch nothing for it.
    await deliverEvent(h.orchestrator, "phase-due", phaseDueBody(batch, 1), "late-phase-due");
    const [joiner] = await insertMembers(h.db, batch.batchId, [
      { memberKey: "late@contoso.test", data: { Upn: "late@contoso.test" } },
    ]);
    await deliverEvent(
      h.orchestrator,
      "member-added",
      { BatchId: batch.batchId, MemberKey: joiner!.memberKey, BatchMemberId: joiner!.id },
      "late-member-added",
    );
    expect(await stepsOf(h.db, batch.batchId)).toHaveLength(4);
    h.open("cancel-mid-phase");
  });

  it("leaves no step open when results and the cancel race", async () => {
    const batch = await seedBatch(h.db, holdYaml("cancel-race"), membersWith(8));
    await startPhase(batch);
    const dispatched = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps.filter((step) => step.status === "dispatched").length === 8,
      "every member's first step to be dispatched",
    );
    // Every member's first step succeeds (which dispatches its next step) while the cancel runs.
    const results = dispatched
      .filter((step) => step.status === "dispatched")
      .map((step) =>
        deliverResult(h.orchestrator, {
          JobId: step.jobId!,
          Status: "Success",
          Result: { complete: true, data: {} },
          Error: null,
          CorrelationData: {
            StepExecutionId: step.id,
            IsInitStep: false,
            RunbookName: batch.runbookName,
            RunbookVersion: batch.runbookVersion,
          },
        }),
      );
    const [cancelled] = await Promise.all([cancelBatch(h.db, batch.batchId, "batch.cancelled"), ...results]);

    expect(cancelled?.batch.status).toBe("cancelled");
    expect(await openStepsOf(h.db, batch.batchId)).toEqual([]);
    const steps = await stepsOf(h.db, batch.batchId);
    expect(steps).toHaveLength(16);
    // Each step either finished before the cancel reached it or was cancelled: none left in flight.
    for (const step of steps) expect(["succeeded", "cancelled"]).toContain(step.status);
    expect(steps.filter((step) => step.status === "cancelled").length).toBeGreaterThan(0);
    expect(await batchStatus(h.db, batch.batchId)).toBe("cancelled");
    h.open("cancel-race");
  });
});
