import { redriveBatch } from "@matoolkit/commands";
import type { Db } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
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
import { batchStatus, memberStatuses, stepOf, stepsOf, transitionsOf } from "../test/test-queries.ts";

/**
 * Issue 30, `when:`: members take different paths through one runbook. A step whose condition is
 * false for a member ends `skipped` when its turn comes (never sent to a worker), with an event
 * naming the condition; it counts as done, so the member's next step runs and the phase and the
 * batch complete as if it had succeeded.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.stop();
});

const step = (name: string, ...extra: string[]) =>
  [
    `      - name: ${name}`,
    "        worker_id: worker-01",
    "        function: Test-Echo",
    "        params:",
    `          Step: ${name}`,
    ...extra.map((line) => `        ${line}`),
  ].join("\n");

async function outcomeOf(db: Db, table: "batches" | "phaseExecutions", id: number) {
  return db
    .selectFrom(table)
    .select(["status", "outcome", "succeededMembers", "failedMembers"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
}

async function runPhase(batch: SeededBatch, index: number): Promise<void> {
  const phase = batch.phases[index]!;
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, index), `phase-due:${phase.id}`);
  await eventually(
    () => outcomeOf(h.db, "phaseExecutions", phase.id),
    (row) => row.status === "completed" || row.status === "failed",
    `phase ${phase.phaseName} to end`,
  );
}

async function skipReasonOf(db: Db, stepId: number): Promise<string | null> {
  const row = await db
    .selectFrom("events")
    .select("reason")
    .where("entity", "=", "step")
    .where("entityId", "=", stepId)
    .where("toStatus", "=", "skipped")
    .executeTakeFirst();
  return row?.reason ?? null;
}

/** The steps of a member as `name:status`, in phase then step order. */
async function pathsOf(batch: SeededBatch): Promise<Record<string, string[]>> {
  const paths: Record<string, string[]> = {};
  for (const s of await stepsOf(h.db, batch.batchId))
    (paths[s.memberKey] ??= []).push(`${s.stepName}:${s.status}`);
  return paths;
}

const workerCallsOf = (stepName: string) =>
  h.calls.filter((call) => call.functionName === "Test-Echo" && call.params.Step === stepName);

describe("when: on steps", () => {
  it("one member skips a step, the other runs it; both go on to the next step; phase and batch complete", async () => {
    const yaml = runbookYaml(`  columns: [HasMailbox]
phases:
  - name: migrate
    offset: T-0
    steps:
${step("check")}
${step("move-mailbox", `when: "{{HasMailbox}} == 'true'"`)}
${step("finish")}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ HasMailbox: index === 0 ? "true" : "false" })),
    );
    await runPhase(batch, 0);

    expect(await pathsOf(batch)).toEqual({
      "m0@contoso.test": ["check:succeeded", "move-mailbox:succeeded", "finish:succeeded"],
      "m1@contoso.test": ["check:succeeded", "move-mailbox:skipped", "finish:succeeded"],
    });
    const steps = await stepsOf(h.db, batch.batchId);
    const skipped = stepOf(steps, "m1@contoso.test", 1);
    expect(skipped).toMatchObject({ jobId: null, dispatchedAt: null, errorCode: null });
    expect(skipped.completedAt).not.toBeNull();
    // Never sent: the worker ran move-mailbox for m0 only.
    expect(workerCallsOf("move-mailbox").map((call) => call.stepExecutionId)).toEqual([
      stepOf(steps, "m0@contoso.test", 1).id,
    ]);
    expect(await transitionsOf(h.db, "step", skipped.id)).toEqual(["pending→skipped"]);
    expect(await skipReasonOf(h.db, skipped.id)).toBe("when: {{HasMailbox}} == 'true' is false");
    // finish ran after the skip, for m1 as for m0.
    expect(stepOf(steps, "m1@contoso.test", 2).dispatchedAt!.getTime()).toBeGreaterThanOrEqual(
      skipped.completedAt!.getTime(),
    );

    expect(await outcomeOf(h.db, "phaseExecutions", batch.phases[0]!.id)).toEqual({
      status: "completed",
      outcome: "succeeded",
      succeededMembers: 2,
      failedMembers: 0,
    });
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
    expect(await outcomeOf(h.db, "batches", batch.batchId)).toMatchObject({
      outcome: "succeeded",
      succeededMembers: 2,
    });
  });

  it("decides on an earlier step's output, when the step's turn comes; several skips in a row end the chain", async () => {
    const yaml = runbookYaml(`  columns: [Existing]
phases:
  - name: prepare
    offset: T-0
    steps:
      - name: find-target
        worker_id: worker-01
        function: Test-Echo
        params:
          TargetUserId: "{{Existing}}"
        output_params:
          TargetUserId: TargetUserId
${step("create-target", `when: "{{TargetUserId}} == ''"`)}
${step("link-target", `when: "{{TargetUserId}} is empty"`)}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ Existing: index === 0 ? "user-0" : "" })),
    );
    await runPhase(batch, 0);
    expect(await pathsOf(batch)).toEqual({
      "m0@contoso.test": ["find-target:succeeded", "create-target:skipped", "link-target:skipped"],
      "m1@contoso.test": ["find-target:succeeded", "create-target:succeeded", "link-target:succeeded"],
    });
    expect(await outcomeOf(h.db, "phaseExecutions", batch.phases[0]!.id)).toMatchObject({
      status: "completed",
      succeededMembers: 2,
    });
  });

  it("a phase where every member skips every step completes", async () => {
    const yaml = runbookYaml(`  columns: [Kind]
phases:
  - name: shared-only
    offset: T-0
    steps:
${step("convert", `when: "{{Kind}} in ['shared', 'room']"`)}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, () => ({ Kind: "user" })),
    );
    await runPhase(batch, 0);
    expect(await pathsOf(batch)).toEqual({
      "m0@contoso.test": ["convert:skipped"],
      "m1@contoso.test": ["convert:skipped"],
    });
    expect(await outcomeOf(h.db, "phaseExecutions", batch.phases[0]!.id)).toMatchObject({
      status: "completed",
      outcome: "succeeded",
    });
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
  });

  it("a condition that cannot be decided fails that member's step (condition.invalid), not the others", async () => {
    const yaml = runbookYaml(`  columns: [Quota]
phases:
  - name: migrate
    offset: T-0
    steps:
${step("grow-mailbox", `when: "{{Quota}} > 50"`)}
${step("finish")}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(3, (index) => ({ Quota: ["90", "10", "lots"][index]! })),
    );
    await runPhase(batch, 0);
    expect(await pathsOf(batch)).toEqual({
      "m0@contoso.test": ["grow-mailbox:succeeded", "finish:succeeded"],
      "m1@contoso.test": ["grow-mailbox:skipped", "finish:succeeded"],
      "m2@contoso.test": ["grow-mailbox:failed", "finish:cancelled"],
    });
    const failed = stepOf(await stepsOf(h.db, batch.batchId), "m2@contoso.test", 0);
    expect(failed).toMatchObject({
      errorCode: "condition.invalid",
      errorMessage: "{{Quota}} is not a number, so {{Quota}} > 50 cannot be decided",
    });
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({
      "m0@contoso.test": "active",
      "m1@contoso.test": "active",
      "m2@contoso.test": "failed",
    });
    expect(await outcomeOf(h.db, "phaseExecutions", batch.phases[0]!.id)).toEqual({
      status: "completed",
      outcome: "partially_succeeded",
      succeededMembers: 2,
      failedMembers: 1,
    });
  });
});

describe("when: and redrive", () => {
  it("a redriven member runs its failed step again and goes on; its skipped step stays skipped", async () => {
    const yaml = runbookYaml(`  columns: [HasMailbox]
phases:
  - name: cutover
    offset: T-0
    steps:
${step("check")}
${step("move-mailbox", `when: "{{HasMailbox}} == 'true'"`)}
      - name: flaky
        worker_id: worker-01
        function: Test-Flaky
        params:
          FailTimes: "{{FailTimes}}"
${step("finish")}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ HasMailbox: "false", FailTimes: index === 0 ? 1 : 0 })),
    );
    await runPhase(batch, 0);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to end",
    );
    expect((await pathsOf(batch))["m0@contoso.test"]).toEqual([
      "check:succeeded",
      "move-mailbox:skipped",
      "flaky:failed",
      "finish:cancelled",
    ]);
    const m0 = batch.members.find((member) => member.memberKey === "m0@contoso.test")!.id;
    const outcome = await h.db.transaction().execute((trx) =>
      redriveBatch(trx, {
        batchId: batch.batchId,
        target: { kind: "members", memberIds: [m0] },
        actor: "operator@contoso.test",
      }),
    );
    expect(outcome.ok).toBe(true);
    await eventually(
      () => pathsOf(batch),
      (paths) => paths["m0@contoso.test"]?.at(-1) === "finish:succeeded",
      "the redriven member to finish",
    );
    expect(await pathsOf(batch)).toEqual({
      "m0@contoso.test": ["check:succeeded", "move-mailbox:skipped", "flaky:succeeded", "finish:succeeded"],
      "m1@contoso.test": ["check:succeeded", "move-mailbox:skipped", "flaky:succeeded", "finish:succeeded"],
    });
    const skipped = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 1);
    expect(await transitionsOf(h.db, "step", skipped.id)).toEqual(["pending→skipped"]);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete again",
    );
  });
});

describe("when: on a phase", () => {
  it("skips each of the phase's steps for a member it is false for; the batch still completes", async () => {
    const yaml = runbookYaml(`  columns: [Kind]
phases:
  - name: prepare
    offset: T-1d
    steps:
${step("stamp", "output_params: { Stamped: Step }")}
  - name: mailbox
    offset: T-0
    when: "{{Kind}} == 'shared' and {{Stamped}} is not empty"
    steps:
${step("convert")}
${step("grant", `when: "{{Upn}} != ''"`)}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ Kind: index === 0 ? "shared" : "user" })),
    );
    await runPhase(batch, 0);
    await runPhase(batch, 1);
    expect(await pathsOf(batch)).toEqual({
      "m0@contoso.test": ["stamp:succeeded", "convert:succeeded", "grant:succeeded"],
      "m1@contoso.test": ["stamp:succeeded", "convert:skipped", "grant:skipped"],
    });
    const steps = await stepsOf(h.db, batch.batchId);
    expect(await skipReasonOf(h.db, stepOf(steps, "m1@contoso.test", 1, "mailbox").id)).toBe(
      "phase when: {{Kind}} == 'shared' and {{Stamped}} is not empty is false",
    );
    expect(await outcomeOf(h.db, "phaseExecutions", batch.phases[1]!.id)).toMatchObject({
      status: "completed",
      outcome: "succeeded",
      succeededMembers: 2,
    });
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
  });
});
