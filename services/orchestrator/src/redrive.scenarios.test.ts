import {
  pauseBatch,
  redriveBatch,
  resumeBatch,
  type RedriveResult,
  type RedriveTarget,
} from "@matoolkit/commands";
import { transitionBatch, transitionPhase } from "@matoolkit/db";
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
import {
  batchStatus,
  memberStatuses,
  phaseStatuses,
  stepOf,
  stepsOf,
  transitionsOf,
} from "../test/test-queries.ts";

/**
 * Issue 12 redrive, end to end through the orchestrator and a real worker: the redrive transaction
 * (libs/commands redriveBatch, as POST /api/batches/{id}/redrive runs it), then the member-redriven
 * message, the redriven jobs and their results.
 */
let h: Harness;
const OPERATOR = "operator@contoso.test";

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.stop();
});

async function redrive(batch: SeededBatch, target: RedriveTarget): Promise<RedriveResult> {
  const outcome = await h.db
    .transaction()
    .execute((trx) => redriveBatch(trx, { batchId: batch.batchId, target, actor: OPERATOR }));
  if (!outcome.ok) throw new Error(`redrive refused: ${outcome.refusal.message}`);
  return outcome.result;
}

const memberId = (batch: SeededBatch, key: string): number => {
  const member = batch.members.find((candidate) => candidate.memberKey === key);
  if (member === undefined) throw new Error(`no member ${key}`);
  return member.id;
};

async function startPhase(batch: SeededBatch, index: number): Promise<void> {
  const phase = batch.phases[index]!;
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, index), `phase-due:${phase.id}`);
}

const ended = (status: string) => status === "completed" || status === "failed";

async function untilBatch(batch: SeededBatch, done: (status: string) => boolean, what: string) {
  await eventually(() => batchStatus(h.db, batch.batchId), done, what);
}

/** The step's own jobs, in call order (rollback jobs carry the step's id in their correlation too). */
const jobIdsOf = (stepId: number): string[] =>
  h.calls
    .filter((call) => !call.isInitStep && call.stepExecutionId === stepId)
    .map((call) => call.jobId)
    .filter((jobId) => jobId === `step-${stepId}` || jobId.startsWith(`step-${stepId}-`));

async function actorEvents(batchId: number): Promise<string[]> {
  const rows = await h.db
    .selectFrom("events")
    .select(["entity", "fromStatus", "toStatus", "actor"])
    .where("batchId", "=", batchId)
    .where("actor", "is not", null)
    .orderBy("id")
    .execute();
  return rows.map((row) => `${row.entity}:${row.fromStatus}→${row.toStatus}:${row.actor}`);
}

const step = (name: string, fn: string, params: string) => `
      - name: ${name}
        worker_id: worker-01
        function: ${fn}
        params:
${params}`;

describe("redrive", () => {
  it("runs a member failed at step 2 of 3 again from that step, with redrive job ids; the batch reopens and ends again", async () => {
    const yaml = runbookYaml(`
phases:
  - name: cutover
    offset: T-0
    steps:${step("prepare", "Test-Echo", '          Upn: "{{Upn}}"')}${step("move", "Test-Flaky", '          FailTimes: "{{FailTimes}}"')}${step("finish", "Test-Echo", '          Upn: "{{Upn}}"')}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ FailTimes: index === 0 ? 1 : 0 })),
    );
    await startPhase(batch, 0);
    await untilBatch(batch, ended, "the batch to end");
    expect(await batchStatus(h.db, batch.batchId)).toBe("completed");
    const before = await stepsOf(h.db, batch.batchId);
    const [prepare, move, finish] = [0, 1, 2].map((index) => stepOf(before, "m0@contoso.test", index));
    expect([prepare!.status, move!.status, finish!.status]).toEqual(["succeeded", "failed", "cancelled"]);
    expect((await memberStatuses(h.db, batch.batchId))["m0@contoso.test"]).toBe("failed");

    const m0 = memberId(batch, "m0@contoso.test");
    const result = await redrive(batch, { kind: "members", memberIds: [m0] });
    expect(result).toEqual({
      batchId: batch.batchId,
      batchStatus: "active",
      redriven: [
        {
          memberId: m0,
          steps: [
            {
              id: move!.id,
              phaseExecutionId: batch.phases[0]!.id,
              stepName: "move",
              jobId: `step-${move!.id}-redrive-1`,
            },
            {
              id: finish!.id,
              phaseExecutionId: batch.phases[0]!.id,
              stepName: "finish",
              jobId: `step-${finish!.id}-redrive-1`,
            },
          ],
        },
      ],
    });
    await untilBatch(batch, ended, "the batch to end again");

    expect(await batchStatus(h.db, batch.batchId)).toBe("completed");
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({
      "m0@contoso.test": "active",
      "m1@contoso.test": "active",
    });
    const after = await stepsOf(h.db, batch.batchId);
    expect(after.filter((s) => s.memberKey === "m0@contoso.test").map((s) => s.status)).toEqual([
      "succeeded",
      "succeeded",
      "succeeded",
    ]);
    // The succeeded step is not run again; the failed one and the one after it run as redrive 1.
    expect(jobIdsOf(prepare!.id)).toEqual([`step-${prepare!.id}`]);
    expect(jobIdsOf(move!.id)).toEqual([`step-${move!.id}`, `step-${move!.id}-redrive-1`]);
    expect(jobIdsOf(finish!.id)).toEqual([`step-${finish!.id}-redrive-1`]);
    expect(stepOf(after, "m0@contoso.test", 1)).toMatchObject({
      redriveCount: 1,
      retryCount: 0,
      errorCode: null,
    });

    expect(await transitionsOf(h.db, "member", m0)).toEqual(["active→failed", "failed→active"]);
    expect(await transitionsOf(h.db, "step", move!.id)).toEqual([
      "pending→dispatched",
      "dispatched→failed",
      "failed→pending",
      "pending→dispatched",
      "dispatched→succeeded",
    ]);
    expect((await transitionsOf(h.db, "phase", batch.phases[0]!.id)).slice(-3)).toEqual([
      "dispatched→completed",
      "completed→dispatched",
      "dispatched→completed",
    ]);
    expect((await transitionsOf(h.db, "batch", batch.batchId)).slice(-3)).toEqual([
      "active→completed",
      "completed→active",
      "active→completed",
    ]);
    // The operator's changes carry their identity; what the system did next carries none.
    expect(await actorEvents(batch.batchId)).toEqual([
      `member:failed→active:${OPERATOR}`,
      `step:failed→pending:${OPERATOR}`,
      `step:cancelled→pending:${OPERATOR}`,
      `phase:completed→dispatched:${OPERATOR}`,
      `batch:completed→active:${OPERATOR}`,
    ]);
  });

  it("a redriven step that fails again retries and rolls back with ids of its own run; a second redrive runs it again", async () => {
    const yaml = runbookYaml(`
phases:
  - name: cutover
    offset: T-0
    steps:
      - name: move
        worker_id: worker-01
        function: Test-Flaky
        params:
          FailTimes: 4
        retry:
          max_retries: 1
          interval: 1s
        on_failure: undo
rollbacks:
  undo:
    - name: undo
      worker_id: worker-01
      function: Test-Echo
      params:
        Undo: "{{Upn}}"
`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    await startPhase(batch, 0);
    await untilBatch(batch, ended, "the first run to fail");
    expect(await batchStatus(h.db, batch.batchId)).toBe("failed");
    const id = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0).id;

    expect((await redrive(batch, { kind: "failedMembers" })).batchStatus).toBe("active");
    // Calls 3 and 4 fail: the redriven run retries once and fails for good, as the first did.
    await eventually(
      async () => ({ status: await batchStatus(h.db, batch.batchId), calls: jobIdsOf(id).length }),
      (state) => state.status === "failed" && state.calls === 4,
      "the redriven run to fail again",
    );
    expect(jobIdsOf(id)).toEqual([
      `step-${id}`,
      `step-${id}-retry-1`,
      `step-${id}-redrive-1`,
      `step-${id}-redrive-1-retry-1`,
    ]);
    await eventually(
      async () =>
        h.calls.filter((call) => call.jobId.startsWith(`rollback-step-${id}-`)).map((call) => call.jobId),
      (jobIds) => jobIds.length === 2,
      "both runs' rollbacks to reach the worker",
    );
    expect(
      h.calls
        .filter((call) => call.jobId.startsWith(`rollback-step-${id}-`))
        .map((call) => call.jobId)
        .sort(),
    ).toEqual([`rollback-step-${id}-1-0`, `rollback-step-${id}-redrive-1-1-0`]);
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({ "m0@contoso.test": "failed" });

    // A second redrive has message and job ids of its own (a reused one would be dropped as a duplicate).
    const second = await redrive(batch, { kind: "step", stepExecutionId: id });
    expect(second.redriven).toEqual([
      {
        memberId: batch.members[0]!.id,
        steps: [expect.objectContaining({ id, jobId: `step-${id}-redrive-2` })],
      },
    ]);
    await untilBatch(batch, (status) => status === "completed", "the second redrive to succeed");
    expect(jobIdsOf(id).at(-1)).toBe(`step-${id}-redrive-2`);
    expect(stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0)).toMatchObject({
      status: "succeeded",
      redriveCount: 2,
      jobId: `step-${id}-redrive-2`,
    });
  });

  it("gives a member failed in phase 1 back its phase-2 steps that its failure cancelled", async () => {
    const yaml = runbookYaml(`
phases:
  - name: pre-checks
    offset: T-1d
    steps:${step("hold-pre", "Hold", "          Gate: cancelled-p1")}${step("check", "Test-Flaky", '          FailTimes: "{{FailTimes}}"')}
  - name: cutover
    offset: T-0
    steps:${step("hold-cut", "Hold", "          Gate: cancelled-p2")}${step("switch", "Test-Echo", '          Upn: "{{Upn}}"')}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ FailTimes: index === 0 ? 1 : 0 })),
    );
    // Both phases running at once (an automated batch whose phases overlap): m0's cutover steps
    // exist, held at their gate, when its pre-check fails.
    await startPhase(batch, 0);
    await startPhase(batch, 1);
    await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps.filter((s) => s.stepName === "hold-cut" && s.status === "dispatched").length === 2,
      "both cutover holds to be dispatched",
    );
    h.open("cancelled-p1");
    await eventually(
      () => memberStatuses(h.db, batch.batchId),
      (statuses) => statuses["m0@contoso.test"] === "failed",
      "m0 to fail its pre-check",
    );
    h.open("cancelled-p2");
    await untilBatch(batch, ended, "the batch to end");
    const before = await stepsOf(h.db, batch.batchId);
    expect(
      before.filter((s) => s.memberKey === "m0@contoso.test").map((s) => `${s.stepName}:${s.status}`),
    ).toEqual(["hold-pre:succeeded", "check:failed", "hold-cut:cancelled", "switch:cancelled"]);

    const result = await redrive(batch, { kind: "failedMembers" });
    expect(result.redriven[0]!.steps.map((s) => s.stepName)).toEqual(["check", "hold-cut", "switch"]);
    await untilBatch(batch, ended, "the batch to end again");
    expect(await batchStatus(h.db, batch.batchId)).toBe("completed");
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed", "completed"]);
    const after = await stepsOf(h.db, batch.batchId);
    expect(
      after.filter((s) => s.memberKey === "m0@contoso.test").map((s) => `${s.stepName}:${s.status}`),
    ).toEqual(["hold-pre:succeeded", "check:succeeded", "hold-cut:succeeded", "switch:succeeded"]);
    const holdCut = stepOf(after, "m0@contoso.test", 0, "cutover");
    expect(jobIdsOf(holdCut.id)).toEqual([`step-${holdCut.id}`, `step-${holdCut.id}-redrive-1`]);
    // In phase order, as the batch ran them: the cutover starts again only once the redriven
    // pre-check has passed, never beside it.
    const check = stepOf(after, "m0@contoso.test", 1, "pre-checks");
    expect(holdCut.dispatchedAt!.getTime()).toBeGreaterThanOrEqual(check.completedAt!.getTime());
  });

  it("catches a member up on a phase that ran while it was failed", async () => {
    const yaml = runbookYaml(`
phases:
  - name: pre-checks
    offset: T-1d
    steps:${step("check", "Test-Flaky", '          FailTimes: "{{FailTimes}}"')}
  - name: cutover
    offset: T-0
    steps:${step("switch", "Test-Echo", '          Upn: "{{Upn}}"')}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ FailTimes: index === 0 ? 1 : 0 })),
    );
    await startPhase(batch, 0);
    await eventually(
      () => phaseStatuses(h.db, batch.batchId),
      (statuses) => statuses[0] === "completed",
      "pre-checks to end",
    );
    await startPhase(batch, 1);
    await untilBatch(batch, ended, "the batch to end");
    // phase-due took the active members only: m0 has no cutover step.
    expect(
      (await stepsOf(h.db, batch.batchId)).filter((s) => s.memberKey === "m0@contoso.test"),
    ).toHaveLength(1);

    await redrive(batch, { kind: "failedMembers" });
    await untilBatch(batch, ended, "the batch to end again");
    expect(await batchStatus(h.db, batch.batchId)).toBe("completed");
    const switchStep = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0, "cutover");
    expect(switchStep.status).toBe("succeeded");
    // A step created by the catch-up never ran before: its first job id is a plain one.
    expect(jobIdsOf(switchStep.id)).toEqual([`step-${switchStep.id}`]);
    expect((await transitionsOf(h.db, "phase", batch.phases[1]!.id)).slice(-2)).toEqual([
      "completed→dispatched",
      "dispatched→completed",
    ]);
  });

  it("reopens a phase and batch that a stale completion check ended just after the redrive", async () => {
    const yaml = runbookYaml(`
phases:
  - name: cutover
    offset: T-0
    steps:${step("move", "Test-Flaky", '          FailTimes: "{{FailTimes}}"')}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ FailTimes: index === 0 ? 1 : 0 })),
    );
    await startPhase(batch, 0);
    await untilBatch(batch, ended, "the batch to end");
    const phaseId = batch.phases[0]!.id;
    await h.db.transaction().execute(async (trx) => {
      const outcome = await redriveBatch(trx, {
        batchId: batch.batchId,
        target: { kind: "failedMembers" },
        actor: OPERATOR,
      });
      expect(outcome.ok).toBe(true);
      // What a completion check that read "no open step" before the redrive committed would do
      // right after it: end the phase and the batch again, with m0's step pending.
      expect(await transitionPhase(trx, phaseId, "complete", { reason: "stale check" })).toBeDefined();
      expect(await transitionBatch(trx, batch.batchId, "complete", { reason: "stale check" })).toBeDefined();
    });
    await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => stepOf(steps, "m0@contoso.test", 0).status === "succeeded",
      "m0 to run again",
    );
    await untilBatch(batch, (status) => status === "completed", "the batch to complete again");
    expect((await transitionsOf(h.db, "phase", phaseId)).slice(-4)).toEqual([
      "completed→dispatched",
      "dispatched→completed",
      "completed→dispatched",
      "dispatched→completed",
    ]);
    expect((await transitionsOf(h.db, "batch", batch.batchId)).slice(-4)).toEqual([
      "completed→active",
      "active→completed",
      "completed→active",
      "active→completed",
    ]);
  });

  it("ignores a late result of the old attempt, while the redriven job runs", async () => {
    const yaml = runbookYaml(`
phases:
  - name: cutover
    offset: T-0
    steps:${step("move", "Hold", "          Gate: late-old-result\n          FailTimes: 1")}
`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    await startPhase(batch, 0);
    await untilBatch(batch, ended, "the first run to fail");
    const id = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0).id;
    await redrive(batch, { kind: "failedMembers" });
    await eventually(
      async () => jobIdsOf(id),
      (jobIds) => jobIds.includes(`step-${id}-redrive-1`),
      "the redriven job to reach the worker (held at its gate)",
    );
    const eventsBefore = await transitionsOf(h.db, "step", id);
    const correlation = {
      StepExecutionId: id,
      IsInitStep: false,
      RunbookName: batch.runbookName,
      RunbookVersion: batch.runbookVersion,
    };
    for (const Status of ["Success", "Failure"] as const) {
      await deliverResult(h.orchestrator, {
        JobId: `step-${id}`,
        Status,
        Result: { complete: true, data: {} },
        Error: Status === "Failure" ? { Message: "late failure of the first run" } : null,
        CorrelationData: correlation,
      });
    }
    expect(stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0)).toMatchObject({
      status: "dispatched",
      jobId: `step-${id}-redrive-1`,
    });
    expect(await transitionsOf(h.db, "step", id)).toEqual(eventsBefore);
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({ "m0@contoso.test": "active" });

    h.open("late-old-result");
    await untilBatch(batch, (status) => status === "completed", "the redriven run to succeed");
  });

  it("while paused: the steps wait, a late old result is ignored, nothing is sent until the resume", async () => {
    const yaml = runbookYaml(`
phases:
  - name: cutover
    offset: T-0
    steps:${step("move", "Test-Flaky", '          FailTimes: "{{FailTimes}}"')}${step("hold", "Hold", '          Gate: "{{Gate}}"')}
`);
    // m1 stays held at its gate, so the batch is still running when m0 has failed.
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ FailTimes: index === 0 ? 1 : 0, Gate: `paused-redrive-${index}` })),
    );
    h.open("paused-redrive-0");
    await startPhase(batch, 0);
    await eventually(
      () => memberStatuses(h.db, batch.batchId),
      (statuses) => statuses["m0@contoso.test"] === "failed",
      "m0 to fail",
    );
    const id = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0).id;
    const m0 = memberId(batch, "m0@contoso.test");
    expect(
      await h.db.transaction().execute((trx) => pauseBatch(trx, batch.batchId, { actor: OPERATOR })),
    ).toBeDefined();

    const result = await redrive(batch, { kind: "members", memberIds: [m0] });
    expect(result.batchStatus).toBe("paused");
    // The member-redriven message, handled here to the end (the bus's own copy does the same).
    await deliverEvent(
      h.orchestrator,
      "member-redriven",
      { BatchId: batch.batchId, BatchMemberId: m0 },
      `member-redriven:${m0}:test`,
    );
    await deliverResult(h.orchestrator, {
      JobId: `step-${id}`,
      Status: "Success",
      Result: { complete: true, data: {} },
      CorrelationData: {
        StepExecutionId: id,
        IsInitStep: false,
        RunbookName: batch.runbookName,
        RunbookVersion: batch.runbookVersion,
      },
    });
    expect(stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0)).toMatchObject({
      status: "pending",
      jobId: null,
      redriveCount: 1,
    });
    expect(jobIdsOf(id)).toEqual([`step-${id}`]);

    expect(
      await h.db.transaction().execute((trx) => resumeBatch(trx, batch.batchId, { actor: OPERATOR })),
    ).toBeDefined();
    await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) =>
        steps.filter((s) => s.memberKey === "m0@contoso.test").every((s) => s.status === "succeeded"),
      "m0 to run again after the resume",
    );
    expect(jobIdsOf(id)).toEqual([`step-${id}`, `step-${id}-redrive-1`]);
    h.open("paused-redrive-1");
    await untilBatch(batch, (status) => status === "completed", "the batch to complete");
  });
});
