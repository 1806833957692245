import { pauseBatch, resumeBatch, type ResumedBatch } from "@matoolkit/commands";
import { cancelBatch, getPhase, insertMembers, listEvents, transitionPhase } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { continuePhaseStart } from "./handlers/phase-due.ts";
import { inHandlerTransaction } from "./handler-transaction.ts";
import {
  deliverEvent,
  deliverResult,
  eventually,
  membersWith,
  phaseDueBody,
  phaseDueFirstChunkOnly,
  runbookYaml,
  seedBatch,
  startHarness,
  type Harness,
  type SeededBatch,
} from "../test/test-harness.ts";
import { batchStatus, phaseStatuses, stepOf, stepsOf, transitionsOf } from "../test/test-queries.ts";

/**
 * Pause and resume (issue 12), on the orchestrator assembled as in production: while a batch is
 * paused its results are recorded but nothing new goes to a worker (no next step, no phase start,
 * no poll, no retry); the resume sends what the pause held back, each timer no earlier than due.
 */
let h: Harness;
const gates = [
  "pause-results",
  "pause-chunks",
  "pause-retry",
  "pause-retry-later",
  "pause-poll",
  "pause-end",
  "pause-cancel",
  "pause-before",
];

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  for (const gate of gates) h.open(gate);
  await h?.stop();
});

const pause = (batchId: number) =>
  h.db.transaction().execute((trx) => pauseBatch(trx, batchId, { actor: "operator@contoso.test" }));

async function resume(batchId: number): Promise<ResumedBatch> {
  const resumed = await h.db
    .transaction()
    .execute((trx) => resumeBatch(trx, batchId, { actor: "operator@contoso.test" }));
  if (resumed === undefined) throw new Error(`batch ${batchId} was not paused`);
  return resumed;
}

const callsOf = (functionName: string) => h.calls.filter((call) => call.functionName === functionName);
const jobIdsOf = (stepId: number) =>
  h.calls.filter((call) => call.stepExecutionId === stepId && !call.isInitStep).map((call) => call.jobId);

function heldPhase(gate: string, extra = ""): string {
  return runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: held
        worker_id: worker-01
        function: Hold
        params:
          Gate: ${gate}
${extra}`);
}

/** A worker result for the step's current job, as the worker would send it. */
function resultFor(
  batch: SeededBatch,
  step: { id: number; jobId: string | null },
  outcome: { Status: "Success" | "Failure"; Result?: unknown },
) {
  return deliverResult(h.orchestrator, {
    JobId: step.jobId!,
    Status: outcome.Status,
    Result: outcome.Result ?? null,
    Error: outcome.Status === "Failure" ? { Message: "failed as the test asked" } : null,
    CorrelationData: {
      StepExecutionId: step.id,
      IsInitStep: false,
      RunbookName: batch.runbookName,
      RunbookVersion: batch.runbookVersion,
    },
  });
}

describe("a paused batch", () => {
  it("records the results of jobs already out but starts no next step, nor a member added meanwhile, until resumed", async () => {
    const yaml = heldPhase(
      "pause-results",
      `      - name: after
        worker_id: worker-01
        function: Test-Echo
`,
    );
    const batch = await seedBatch(h.db, yaml, membersWith(3));
    await deliverEvent(
      h.orchestrator,
      "phase-due",
      phaseDueBody(batch, 0),
      `phase-due:${batch.phases[0]!.id}`,
    );
    await eventually(
      async () => callsOf("Hold").filter((call) => call.params.Gate === "pause-results").length,
      (count) => count === 3,
      "the three first steps to reach the worker",
    );

    expect((await pause(batch.batchId))?.status).toBe("paused");
    h.open("pause-results");
    const afterResults = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps.filter((step) => step.stepIndex === 0).every((step) => step.status === "succeeded"),
      "the running jobs' results to be recorded",
    );
    // Each result's transaction is the one that would have dispatched the next step: none did.
    expect(afterResults.filter((step) => step.stepIndex === 1).map((step) => step.status)).toEqual([
      "pending",
      "pending",
      "pending",
    ]);
    expect(
      callsOf("Test-Echo").filter((call) => afterResults.some((s) => s.id === call.stepExecutionId)),
    ).toEqual([]);

    // A member joining while paused gets its catch-up steps, not started.
    const [late] = await insertMembers(h.db, batch.batchId, [
      { memberKey: "late@contoso.test", data: { Upn: "late@contoso.test" } },
    ]);
    await deliverEvent(
      h.orchestrator,
      "member-added",
      { BatchId: batch.batchId, MemberKey: late!.memberKey, BatchMemberId: late!.id },
      `member-added:${late!.id}`,
    );
    const lateSteps = (await stepsOf(h.db, batch.batchId)).filter(
      (step) => step.memberKey === late!.memberKey,
    );
    expect(lateSteps.map((step) => step.status)).toEqual(["pending", "pending"]);
    expect(await batchStatus(h.db, batch.batchId)).toBe("paused");

    const resumed = await resume(batch.batchId);
    expect(resumed.sent).toEqual({ phases: 1, pollChecks: 0, retryChecks: 0 });
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "the resumed batch to complete",
    );
    for (const step of await stepsOf(h.db, batch.batchId)) {
      expect(await transitionsOf(h.db, "step", step.id)).toEqual([
        "pending→dispatched",
        "dispatched→succeeded",
      ]);
    }
    expect(await transitionsOf(h.db, "batch", batch.batchId)).toEqual([
      "∅→detected",
      "detected→active",
      "active→paused",
      "paused→active",
      "active→completed",
    ]);
    const batchEvents = (await listEvents(h.db, batch.batchId, { limit: 1000 })).filter(
      (event) => event.entity === "batch",
    );
    expect(
      batchEvents.filter((event) => event.actor !== null).map((event) => [event.toStatus, event.actor]),
    ).toEqual([
      ["paused", "operator@contoso.test"],
      ["active", "operator@contoso.test"],
    ]);
  });

  it("stops a chunked phase start between chunks; the resume creates and starts the rest", async () => {
    const batch = await seedBatch(h.db, heldPhase("pause-chunks"), membersWith(5));
    const phaseId = batch.phases[0]!.id;
    // The first chunk (2 members) commits with the dispatch; the pause lands before the next one.
    await phaseDueFirstChunkOnly(h.orchestrator, phaseDueBody(batch, 0));
    expect((await stepsOf(h.db, batch.batchId)).map((step) => step.status)).toEqual([
      "dispatched",
      "dispatched",
    ]);
    await pause(batch.batchId);
    const firstTwo = batch.members.slice(0, 2).map((member) => member.id);
    // The next chunk, as the first one's follow-up would run it: it sees the pause and stops.
    await inHandlerTransaction(h.orchestrator, (scope) =>
      continuePhaseStart(scope, { phaseExecutionId: phaseId, afterMemberId: firstTwo[1]! }),
    );
    // A phase-due arriving while paused (a duplicate, or the workflow's) starts nothing either.
    await deliverEvent(h.orchestrator, "phase-due", phaseDueBody(batch, 0), `phase-due:${phaseId}:paused`);
    expect(await stepsOf(h.db, batch.batchId)).toHaveLength(2);
    expect((await getPhase(h.db, phaseId))?.stepsCreatedAt).toBeNull();

    expect((await resume(batch.batchId)).sent.phases).toBe(1);
    const started = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps.length === 5 && steps.every((step) => step.status === "dispatched"),
      "every member's step to be created and started",
    );
    // The first two kept their one job each.
    for (const step of started) expect(jobIdsOf(step.id).length).toBeLessThanOrEqual(1);
    h.open("pause-chunks");
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "the batch to complete",
    );
    for (const step of await stepsOf(h.db, batch.batchId))
      expect(jobIdsOf(step.id)).toEqual([`step-${step.id}`]);
  });

  it("holds a retry that falls due while paused until the resume, never dispatching it before retry_after", async () => {
    const retry = `        retry:
          max_retries: 1
          interval: 1s
`;
    const batch = await seedBatch(h.db, heldPhase("pause-retry", retry), membersWith(1));
    await deliverEvent(
      h.orchestrator,
      "phase-due",
      phaseDueBody(batch, 0),
      `phase-due:${batch.phases[0]!.id}`,
    );
    const [first] = await stepsOf(h.db, batch.batchId);
    await pause(batch.batchId);
    // The running job fails while paused: the failure is recorded and the retry scheduled.
    await resultFor(batch, first!, { Status: "Failure" });
    const waiting = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    expect(waiting).toMatchObject({ status: "pending", retryCount: 1 });
    // The retry-check falls due while paused: nothing is sent.
    await eventually(
      async () => Date.now(),
      (now) => now > waiting.retryAfter!.getTime(),
      "the retry time to pass",
    );
    await deliverEvent(
      h.orchestrator,
      "retry-check",
      { StepExecutionId: waiting.id, IsInitStep: false },
      `retry-check:step:${waiting.id}:1:while-paused`,
    );
    expect(stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0).status).toBe("pending");
    expect(jobIdsOf(waiting.id)).toEqual([`step-${waiting.id}`]);

    // Due already: the resume's phase restart dispatches it.
    await resume(batch.batchId);
    const retried = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps[0]?.status === "dispatched",
      "the retry to be dispatched on resume",
    );
    expect(retried[0]).toMatchObject({ jobId: `step-${waiting.id}-retry-1` });
    expect(retried[0]!.dispatchedAt!.getTime()).toBeGreaterThanOrEqual(waiting.retryAfter!.getTime());
    h.open("pause-retry");
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "the batch to complete",
    );
  });

  it("keeps a retry that is not due yet at resume waiting for its retry time", async () => {
    const retry = `        retry:
          max_retries: 1
          interval: 1h
`;
    const batch = await seedBatch(h.db, heldPhase("pause-retry-later", retry), membersWith(1));
    await deliverEvent(
      h.orchestrator,
      "phase-due",
      phaseDueBody(batch, 0),
      `phase-due:${batch.phases[0]!.id}`,
    );
    const [first] = await stepsOf(h.db, batch.batchId);
    await pause(batch.batchId);
    await resultFor(batch, first!, { Status: "Failure" });
    const resumed = await resume(batch.batchId);
    expect(resumed.sent).toEqual({ phases: 1, pollChecks: 0, retryChecks: 1 });
    // The phase restart the resume sends (delivered here at once) leaves the waiting retry alone.
    await deliverEvent(
      h.orchestrator,
      "phase-due",
      phaseDueBody(batch, 0),
      `phase-due:${batch.phases[0]!.id}:t`,
    );
    const step = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    expect(step).toMatchObject({ status: "pending", retryCount: 1, jobId: null });
    // When it falls due, it dispatches the retry (delivered here as at that time).
    await deliverEvent(
      h.orchestrator,
      "retry-check",
      { StepExecutionId: step.id, IsInitStep: false },
      `retry-check:step:${step.id}:1:resume-1`,
    );
    expect(stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0)).toMatchObject({
      status: "dispatched",
      jobId: `step-${step.id}-retry-1`,
    });
    h.open("pause-retry-later");
  });

  it("stops polling while paused and polls again on resume", async () => {
    const poll = `        poll:
          interval: 1s
          timeout: 1h
`;
    const batch = await seedBatch(h.db, heldPhase("pause-poll", poll), membersWith(1));
    await deliverEvent(
      h.orchestrator,
      "phase-due",
      phaseDueBody(batch, 0),
      `phase-due:${batch.phases[0]!.id}`,
    );
    const [first] = await stepsOf(h.db, batch.batchId);
    await pause(batch.batchId);
    // The worker answers {complete: false} while paused: recorded, the step polls.
    await resultFor(batch, first!, { Status: "Success", Result: { complete: false } });
    const polling = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    expect(polling).toMatchObject({ status: "polling", pollCount: 0 });
    await eventually(
      async () => Date.now(),
      (now) => now > polling.lastPolledAt!.getTime() + 1500,
      "the poll interval to pass",
    );
    await deliverEvent(
      h.orchestrator,
      "poll-check",
      { StepExecutionId: polling.id, IsInitStep: false },
      `poll-check:step:${polling.id}:1:while-paused`,
    );
    expect(stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0)).toMatchObject({
      status: "polling",
      pollCount: 0,
    });

    expect((await resume(batch.batchId)).sent.pollChecks).toBe(1);
    await eventually(
      async () => jobIdsOf(polling.id),
      (jobIds) => jobIds.includes(`step-${polling.id}-poll-1`),
      "the resume's poll to reach the worker",
    );
    // Only now: the first job (still held) answering earlier would have completed the step unpolled.
    h.open("pause-poll");
    const done = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps[0]?.status === "succeeded",
      "the step to poll again and succeed",
    );
    expect(done[0]).toMatchObject({ pollCount: 1, jobId: `step-${polling.id}-poll-1` });
    expect(await transitionsOf(h.db, "step", polling.id)).toEqual([
      "pending→dispatched",
      "dispatched→polling",
      "polling→succeeded",
    ]);
  });

  it("can be cancelled, which ends its open phases and steps", async () => {
    const batch = await seedBatch(h.db, heldPhase("pause-cancel"), membersWith(2));
    await deliverEvent(
      h.orchestrator,
      "phase-due",
      phaseDueBody(batch, 0),
      `phase-due:${batch.phases[0]!.id}`,
    );
    await pause(batch.batchId);
    const cancelled = await cancelBatch(h.db, batch.batchId, "batch.cancelled");
    expect(cancelled?.stepIds).toHaveLength(2);
    expect(await batchStatus(h.db, batch.batchId)).toBe("cancelled");
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["cancelled"]);
    expect((await stepsOf(h.db, batch.batchId)).map((step) => step.status)).toEqual([
      "cancelled",
      "cancelled",
    ]);
    // Nothing to resume any more.
    expect(await h.db.transaction().execute((trx) => resumeBatch(trx, batch.batchId))).toBeUndefined();
  });

  it("completes when its last running jobs finish", async () => {
    const batch = await seedBatch(h.db, heldPhase("pause-end"), membersWith(2));
    await deliverEvent(
      h.orchestrator,
      "phase-due",
      phaseDueBody(batch, 0),
      `phase-due:${batch.phases[0]!.id}`,
    );
    await pause(batch.batchId);
    h.open("pause-end");
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "the paused batch to complete",
    );
    expect(await transitionsOf(h.db, "batch", batch.batchId)).toEqual([
      "∅→detected",
      "detected→active",
      "active→paused",
      "paused→completed",
    ]);
  });

  it("holds a phase dispatched just before the pause: its phase-due starts nothing until the resume", async () => {
    const batch = await seedBatch(h.db, heldPhase("pause-before"), membersWith(2));
    const phaseId = batch.phases[0]!.id;
    // The admin API or the workflow dispatched the phase; its phase-due arrives after the pause.
    await transitionPhase(h.db, phaseId, "dispatch", { reason: "test" });
    await pause(batch.batchId);
    await deliverEvent(h.orchestrator, "phase-due", phaseDueBody(batch, 0), `phase-due:${phaseId}`);
    expect(await stepsOf(h.db, batch.batchId)).toEqual([]);
    await resume(batch.batchId);
    h.open("pause-before");
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "the resumed batch to run its phase and complete",
    );
  });
});
