import { cancelBatch, transitionStep } from "@matoolkit/db";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import { batchStatus, stepOf, stepsOf, transitionsOf, type StepView } from "../test/test-queries.ts";

/**
 * 000 "Race Condition Safety", guard 5 (issue 31): a retry-check (or poll-check) that arrives after
 * its step was cancelled does nothing: the step stays cancelled, no job goes to a worker, no
 * transition is recorded. The handlers check the step's status first; the state machine's SQL
 * guard (dispatch only from `pending`, a poll only while `polling`) and the batch/member checks
 * stand behind that check, so each case below is reached through a different cancel.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.stop();
});

const jobIdsOf = (stepId: number): string[] =>
  h.calls.filter((call) => !call.isInitStep && call.stepExecutionId === stepId).map((call) => call.jobId);

const retrying = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: flaky
        worker_id: worker-01
        function: Test-Flaky
        params:
          FailTimes: 1
        retry:
          max_retries: 1
          interval: 1h
`);

const polling = runbookYaml(`
phases:
  - name: cutover
    offset: T-0
    steps:
      - name: move-mailbox
        worker_id: worker-01
        function: Test-Poll
        params:
          PendingTimes: 1000
        poll:
          interval: 1m
          timeout: 1h
`);

/** Runs the phase until the member's only step is `pending` again, its retry scheduled an hour away. */
async function stepAwaitingRetry(members = 1): Promise<{ batch: SeededBatch; step: StepView }> {
  const batch = await seedBatch(h.db, retrying, membersWith(members));
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
  const steps = await eventually(
    () => stepsOf(h.db, batch.batchId),
    (rows) =>
      rows.length === members && rows.every((row) => row.status === "pending" && row.retryCount === 1),
    "the steps to wait for their retry",
  );
  return { batch, step: stepOf(steps, "m0@contoso.test", 0) };
}

async function stepPolling(members = 1): Promise<{ batch: SeededBatch; step: StepView }> {
  const batch = await seedBatch(h.db, polling, membersWith(members));
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
  const steps = await eventually(
    () => stepsOf(h.db, batch.batchId),
    (rows) => rows.length === members && rows.every((row) => row.status === "polling"),
    "the steps to start polling",
  );
  return { batch, step: stepOf(steps, "m0@contoso.test", 0) };
}

/** The retry-check as the orchestrator's timer sends it, delivered once the retry is due. */
function retryCheck(step: StepView, tag: string): Promise<void> {
  const due = { ...h.orchestrator, now: () => new Date(Date.now() + 2 * 3600_000) };
  return deliverEvent(due, "retry-check", { StepExecutionId: step.id, IsInitStep: false }, tag);
}

/** The poll-check two minutes on: the poll interval has elapsed, the poll timeout has not. */
function pollCheck(step: StepView, tag: string): Promise<void> {
  const later = { ...h.orchestrator, now: () => new Date(Date.now() + 120_000) };
  return deliverEvent(later, "poll-check", { StepExecutionId: step.id, IsInitStep: false }, tag);
}

/**
 * Runs `check` while another transaction holds the batch row, as a batch transition in flight does
 * (the cancel of a large batch, a pause). A check for a step no longer open must be answered from
 * the step alone: had it share-locked the batch first, it would wait for that transaction.
 */
async function answeredWhileBatchLocked(batch: SeededBatch, check: () => Promise<void>): Promise<string> {
  return h.db.transaction().execute(async (trx) => {
    await sql`SELECT id FROM batches WHERE id = ${batch.batchId} FOR NO KEY UPDATE`.execute(trx);
    return Promise.race([
      check().then(() => "handled"),
      new Promise<string>((resolve) => setTimeout(() => resolve("waited for the batch lock"), 3000)),
    ]);
  });
}

async function expectUntouched(step: StepView, transitions: string[], jobIds: string[]): Promise<void> {
  const after = stepOf(await stepsOf(h.db, step.batchId), "m0@contoso.test", 0);
  expect(after).toMatchObject({ status: "cancelled", jobId: step.jobId, pollCount: step.pollCount });
  expect(await transitionsOf(h.db, "step", step.id)).toEqual(transitions);
  expect(jobIdsOf(step.id)).toEqual(jobIds);
}

describe("a retry-check after its step was cancelled (guard 5)", () => {
  it("does nothing when the batch was cancelled while the retry waited", async () => {
    const { batch, step } = await stepAwaitingRetry(2);
    const cancelled = await cancelBatch(h.db, batch.batchId, "batch.cancelled");
    expect(cancelled?.stepIds).toHaveLength(2);

    await retryCheck(step, `retry-check:step:${step.id}:1`);

    await expectUntouched(
      step,
      ["pending→dispatched", "dispatched→failed", "failed→pending", "pending→cancelled"],
      [`step-${step.id}`],
    );
    expect(await batchStatus(h.db, batch.batchId)).toBe("cancelled");
  });

  it("does nothing when the member was removed while the retry waited", async () => {
    const { batch, step } = await stepAwaitingRetry();
    const body = { BatchId: batch.batchId, MemberKey: "m0@contoso.test", BatchMemberId: step.batchMemberId };
    await deliverEvent(h.orchestrator, "member-removed", body, `member-removed:${step.batchMemberId}`);

    await retryCheck(step, `retry-check:step:${step.id}:1`);

    await expectUntouched(
      step,
      ["pending→dispatched", "dispatched→failed", "failed→pending", "pending→cancelled"],
      [`step-${step.id}`],
    );
  });

  it("does nothing when only the step was cancelled, batch and member running on", async () => {
    // Neither the batch nor the member stops this check: the step's own status does.
    const { step } = await stepAwaitingRetry();
    expect(await transitionStep(h.db, step.id, "cancel", { reason: "test" })).toBeDefined();

    await retryCheck(step, `retry-check:step:${step.id}:1`);

    await expectUntouched(
      step,
      ["pending→dispatched", "dispatched→failed", "failed→pending", "pending→cancelled"],
      [`step-${step.id}`],
    );
  });

  it("is answered from the step alone, without waiting for a batch transition in flight", async () => {
    const { batch, step } = await stepAwaitingRetry();
    expect(await transitionStep(h.db, step.id, "cancel", { reason: "test" })).toBeDefined();
    expect(
      await answeredWhileBatchLocked(batch, () => retryCheck(step, `retry-check:step:${step.id}:1`)),
    ).toBe("handled");
    await expectUntouched(
      step,
      ["pending→dispatched", "dispatched→failed", "failed→pending", "pending→cancelled"],
      [`step-${step.id}`],
    );
  });
});

describe("a poll-check after its step was cancelled", () => {
  it("sends no poll when the batch was cancelled while the step polled", async () => {
    const { batch, step } = await stepPolling();
    await cancelBatch(h.db, batch.batchId, "batch.cancelled");

    await pollCheck(step, `poll-check:step:${step.id}:1`);

    await expectUntouched(
      step,
      ["pending→dispatched", "dispatched→polling", "polling→cancelled"],
      [`step-${step.id}`],
    );
  });

  it("sends no poll when the member was removed while the step polled", async () => {
    // The batch runs on and poll-check has no member check: the step's status alone stops it.
    const { batch, step } = await stepPolling(2);
    const body = { BatchId: batch.batchId, MemberKey: "m0@contoso.test", BatchMemberId: step.batchMemberId };
    await deliverEvent(h.orchestrator, "member-removed", body, `member-removed:${step.batchMemberId}`);

    await pollCheck(step, `poll-check:step:${step.id}:1`);

    await expectUntouched(
      step,
      ["pending→dispatched", "dispatched→polling", "polling→cancelled"],
      [`step-${step.id}`],
    );
  });

  it("is answered from the step alone, without waiting for a batch transition in flight", async () => {
    const { batch, step } = await stepPolling(2);
    const body = { BatchId: batch.batchId, MemberKey: "m0@contoso.test", BatchMemberId: step.batchMemberId };
    await deliverEvent(h.orchestrator, "member-removed", body, `member-removed:${step.batchMemberId}`);
    expect(await answeredWhileBatchLocked(batch, () => pollCheck(step, `poll-check:step:${step.id}:1`))).toBe(
      "handled",
    );
    await expectUntouched(
      step,
      ["pending→dispatched", "dispatched→polling", "polling→cancelled"],
      [`step-${step.id}`],
    );
  });
});

describe("a worker result after its step was cancelled", () => {
  it("ignores a late {complete: false}: no transition, no poll-check scheduled", async () => {
    const batch = await seedBatch(
      h.db,
      runbookYaml(`
phases:
  - name: cutover
    offset: T-0
    steps:
      - name: move-mailbox
        worker_id: worker-01
        function: Hold
        params:
          Gate: late-incomplete
        poll:
          interval: 1m
          timeout: 1h
`),
      membersWith(1),
    );
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    const [held] = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (rows) => rows[0]?.status === "dispatched",
      "the step to be dispatched",
    );
    await cancelBatch(h.db, batch.batchId, "batch.cancelled");

    // The worker's answer for the step's current job, after the cancel: the job is still the
    // step's, so only the terminal-status guard keeps it from being taken for a poll to schedule.
    await deliverResult(h.orchestrator, {
      JobId: held!.jobId!,
      Status: "Success",
      Result: { complete: false },
      Error: null,
      CorrelationData: {
        StepExecutionId: held!.id,
        IsInitStep: false,
        RunbookName: batch.runbookName,
        RunbookVersion: batch.runbookVersion,
      },
    });

    await expectUntouched(held!, ["pending→dispatched", "dispatched→cancelled"], [`step-${held!.id}`]);
    expect(await messagesWithId(`poll-check:step:${held!.id}:1`)).toBe(0);
    h.open("late-incomplete");
  });
});

/** Rows of a message on its way (outbox) or published (the bus's duplicate-detection keys). */
async function messagesWithId(messageId: string): Promise<number> {
  const { rows } = await sql<{ count: string }>`
    SELECT (SELECT count(*) FROM outbox WHERE message_id = ${messageId})
         + (SELECT count(*) FROM matoolkit_bus.dedupe_keys WHERE message_id = ${messageId}) AS count
  `.execute(h.db);
  return Number(rows[0]!.count);
}
