import { getMember, insertMembers, transitionBatch, transitionPhase } from "@matoolkit/db";
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
  findStep,
  initsOf,
  memberStatuses,
  phaseStatuses,
  stepOf,
  stepsOf,
  transitionsOf,
} from "../test/test-queries.ts";

/** Init, templates and worker outputs, member removal and catch-up (000 "Protocols"). */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.stop();
});

const echoPhase = `
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: echo
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
`;

function batchInitBody(batch: SeededBatch): Record<string, unknown> {
  return { BatchId: batch.batchId, RunbookName: batch.runbookName, RunbookVersion: batch.runbookVersion };
}

const callsFor = (stepId: number, isInitStep = false) =>
  h.calls.filter((call) => call.stepExecutionId === stepId && call.isInitStep === isInitStep);

describe("init", () => {
  it("runs init steps one after another, then activates the batch", async () => {
    const yaml = runbookYaml(`
init:
  - name: create-group
    worker_id: worker-01
    function: Hold
    params:
      Gate: init-create-group
  - name: tag-group
    worker_id: worker-01
    function: Test-Echo
    params:
      Batch: "batch-{{_batch_id}}"
${echoPhase}`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    // As advanceBatchCommand: init_dispatched first, then the message; delivered twice at once.
    await transitionBatch(h.db, batch.batchId, "dispatch_init", { reason: "advanced by operator" });
    await Promise.all(
      [1, 2].map((n) => deliverEvent(h.orchestrator, "batch-init", batchInitBody(batch), `batch-init-${n}`)),
    );

    const [first, second] = await eventually(
      () => initsOf(h.db, batch.batchId),
      (inits) => inits[0]?.status === "dispatched" && callsFor(inits[0].id, true).length === 1,
      "the first init step to reach the worker",
    );
    expect(await initsOf(h.db, batch.batchId)).toHaveLength(2);
    expect(second!.status).toBe("pending");
    expect(callsFor(second!.id, true)).toEqual([]);

    h.open("init-create-group");
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "active",
      "init to finish",
    );
    const inits = await initsOf(h.db, batch.batchId);
    expect(inits.map((init) => [init.stepName, init.status, init.jobId])).toEqual([
      ["create-group", "succeeded", `init-${first!.id}`],
      ["tag-group", "succeeded", `init-${second!.id}`],
    ]);
    expect(inits[1]!.dispatchedAt!.getTime()).toBeGreaterThanOrEqual(inits[0]!.completedAt!.getTime());
    expect(callsFor(second!.id, true).map((call) => call.params)).toEqual([
      { Batch: `batch-${batch.batchId}` },
    ]);
    for (const init of inits) {
      expect(await transitionsOf(h.db, "init", init.id)).toEqual([
        "pending→dispatched",
        "dispatched→succeeded",
      ]);
    }
    expect(await transitionsOf(h.db, "batch", batch.batchId)).toEqual([
      "∅→detected",
      "detected→init_dispatched",
      "init_dispatched→active",
    ]);
  });

  it("an init failure fails the batch and cancels the remaining init steps", async () => {
    const yaml = runbookYaml(`
init:
  - name: prepare
    worker_id: worker-01
    function: Test-Fail
    params:
      Message: "tenant not reachable"
  - name: tag
    worker_id: worker-01
    function: Test-Echo
  - name: announce
    worker_id: worker-01
    function: Test-Echo
${echoPhase}`);
    const batch = await seedBatch(h.db, yaml, membersWith(2));
    await publishEvent(h.bus, "batch-init", batchInitBody(batch), `batch-init:${batch.batchId}`);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "failed",
      "batch to fail",
    );
    const inits = await initsOf(h.db, batch.batchId);
    expect(inits.map((init) => [init.stepName, init.status])).toEqual([
      ["prepare", "failed"],
      ["tag", "cancelled"],
      ["announce", "cancelled"],
    ]);
    expect(inits[0]!.errorMessage).toBe("tenant not reachable");
    expect(await transitionsOf(h.db, "batch", batch.batchId)).toEqual([
      "∅→detected",
      "detected→init_dispatched",
      "init_dispatched→failed",
    ]);
    expect(callsFor(inits[1]!.id, true)).toEqual([]);

    // A failed batch runs no phase.
    await deliverEvent(h.orchestrator, "phase-due", phaseDueBody(batch, 0), "phase-due-after-failure");
    expect(await stepsOf(h.db, batch.batchId)).toEqual([]);
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["pending"]);
  });
});

describe("templates and worker outputs", () => {
  it("fails only the member missing a CSV column, with template.unresolved naming the variable", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: set-target
        worker_id: worker-01
        function: Test-Echo
        params:
          Target: "{{TargetEmail}}"
      - name: confirm
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
`);
    const members = membersWith(3, (index) =>
      index === 1 ? {} : { TargetEmail: `target${index}@fabrikam.test` },
    );
    const batch = await seedBatch(h.db, yaml, members);
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );

    const steps = await stepsOf(h.db, batch.batchId);
    const unresolved = stepOf(steps, "m1@contoso.test", 0);
    expect(unresolved).toMatchObject({ status: "failed", errorCode: "template.unresolved", jobId: null });
    expect(unresolved.errorMessage).toContain("TargetEmail");
    expect(unresolved.errorMessage).not.toMatch(/contoso|fabrikam/);
    expect(await transitionsOf(h.db, "step", unresolved.id)).toEqual(["pending→failed"]);
    expect(callsFor(unresolved.id)).toEqual([]);
    expect(stepOf(steps, "m1@contoso.test", 1).status).toBe("cancelled");
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({
      "m0@contoso.test": "active",
      "m1@contoso.test": "failed",
      "m2@contoso.test": "active",
    });
    for (const key of ["m0@contoso.test", "m2@contoso.test"]) {
      expect(steps.filter((s) => s.memberKey === key).map((s) => s.status)).toEqual([
        "succeeded",
        "succeeded",
      ]);
    }
    expect(stepOf(steps, "m2@contoso.test", 0).paramsJson).toEqual({ Target: "target2@fabrikam.test" });
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed"]);
  });

  it("resolves a step's params from an earlier step's output_params", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: create-mailbox
        worker_id: worker-01
        function: Test-Echo
        params:
          Mailbox: "mbx-{{Upn}}"
        output_params:
          MailboxId: Mailbox
      - name: use-mailbox
        worker_id: worker-01
        function: Test-Echo
        params:
          Identity: "{{MailboxId}}"
          Note: "for {{Upn}}"
`);
    const batch = await seedBatch(h.db, yaml, membersWith(2));
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
    const steps = await stepsOf(h.db, batch.batchId);
    for (const [index, member] of batch.members.entries()) {
      const key = `m${index}@contoso.test`;
      const second = stepOf(steps, key, 1);
      const expected = { Identity: `mbx-${key}`, Note: `for ${key}` };
      expect(second).toMatchObject({ status: "succeeded", paramsResolved: true, paramsJson: expected });
      expect(callsFor(second.id).map((call) => call.params)).toEqual([expected]);
      expect((await getMember(h.db, member.id))?.workerDataJson).toEqual({ MailboxId: `mbx-${key}` });
    }
  });
});

describe("member removal and catch-up", () => {
  it("member-removed cancels the member's open steps, sends on_member_removed and lets the phase complete", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: held
        worker_id: worker-01
        function: Hold
        params:
          Gate: "removal-{{Upn}}"
      - name: next
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
on_member_removed:
  - name: cancel-forwarding
    worker_id: worker-01
    function: Test-Echo
    params:
      Removed: "{{Upn}}"
`);
    const batch = await seedBatch(h.db, yaml, membersWith(2));
    const [removed, staying] = batch.members;
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    h.open(`removal-${staying!.memberKey}`);
    const held = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) =>
        findStep(steps, removed!.memberKey, 0)?.status === "dispatched" &&
        findStep(steps, staying!.memberKey, 1)?.status === "succeeded",
      "the staying member to finish while the other is held",
    );
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["dispatched"]);

    const body = { BatchId: batch.batchId, MemberKey: removed!.memberKey, BatchMemberId: removed!.id };
    // The scheduler may notice the removal twice: the second message changes nothing.
    await publishEvent(h.bus, "member-removed", body, `member-removed:${removed!.id}`);
    await publishEvent(h.bus, "member-removed", body, `member-removed:${removed!.id}:again`);
    // Nothing else happens in the batch: the removal itself must let the phase and batch complete.
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
    const removalJob = `removed-member-${removed!.id}-0`;
    const removalCall = await eventually(
      async () => h.calls.find((call) => call.jobId === removalJob),
      (call) => call !== undefined,
      "the on_member_removed step to reach the worker",
    );
    expect(removalCall).toMatchObject({ functionName: "Test-Echo", params: { Removed: removed!.memberKey } });

    const heldStep = stepOf(held, removed!.memberKey, 0);
    const steps = await stepsOf(h.db, batch.batchId);
    expect(steps.map((s) => [s.memberKey, s.stepIndex, s.status])).toEqual([
      [removed!.memberKey, 0, "cancelled"],
      [removed!.memberKey, 1, "cancelled"],
      [staying!.memberKey, 0, "succeeded"],
      [staying!.memberKey, 1, "succeeded"],
    ]);
    expect(await transitionsOf(h.db, "step", heldStep.id)).toEqual([
      "pending→dispatched",
      "dispatched→cancelled",
    ]);
    expect(await transitionsOf(h.db, "step", stepOf(steps, removed!.memberKey, 1).id)).toEqual([
      "pending→cancelled",
    ]);
    expect(await transitionsOf(h.db, "member", removed!.id)).toEqual(["active→removed"]);
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({
      [removed!.memberKey]: "removed",
      [staying!.memberKey]: "active",
    });
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed"]);

    // The cancelled step's job answering late is ignored.
    await deliverResult(h.orchestrator, {
      JobId: `step-${heldStep.id}`,
      Status: "Success",
      Result: { complete: true, data: {} },
      CorrelationData: {
        StepExecutionId: heldStep.id,
        IsInitStep: false,
        RunbookName: batch.runbookName,
        RunbookVersion: batch.runbookVersion,
      },
    });
    expect(stepOf(await stepsOf(h.db, batch.batchId), removed!.memberKey, 0).status).toBe("cancelled");
    expect(await transitionsOf(h.db, "step", heldStep.id)).toEqual([
      "pending→dispatched",
      "dispatched→cancelled",
    ]);
    h.open(`removal-${removed!.memberKey}`);
    expect(h.calls.filter((call) => call.jobId === removalJob)).toHaveLength(1);
    expect(callsFor(stepOf(steps, removed!.memberKey, 1).id)).toEqual([]);
  });

  it("member-added runs the new member's steps of phases already dispatched or completed", async () => {
    const yaml = runbookYaml(`
phases:
  - name: first
    offset: T-1d
    steps:
      - name: a
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
      - name: b
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
  - name: second
    offset: T-0
    steps:
      - name: c
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    await eventually(
      () => phaseStatuses(h.db, batch.batchId),
      (statuses) => statuses[0] === "completed",
      "the first phase to complete",
    );

    const [late] = await insertMembers(h.db, batch.batchId, [
      { memberKey: "late@contoso.test", data: { Upn: "late@contoso.test" } },
    ]);
    await publishEvent(
      h.bus,
      "member-added",
      { BatchId: batch.batchId, MemberKey: late!.memberKey, BatchMemberId: late!.id },
      `member-added:${late!.id}`,
    );
    const caughtUp = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) =>
        findStep(steps, late!.memberKey, 0, "first")?.status === "succeeded" &&
        findStep(steps, late!.memberKey, 1, "first")?.status === "succeeded",
      "the late member to catch up on the completed phase",
    );
    expect(caughtUp.filter((s) => s.memberKey === late!.memberKey).map((s) => s.phaseName)).toEqual([
      "first",
      "first",
    ]);

    // A pending phase includes the late member when it falls due.
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 1), `phase-due:${batch.phases[1]!.id}`);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
    const steps = await stepsOf(h.db, batch.batchId);
    expect(steps.map((s) => [s.phaseName, s.memberKey, s.stepIndex, s.status])).toEqual([
      ["first", "m0@contoso.test", 0, "succeeded"],
      ["first", "m0@contoso.test", 1, "succeeded"],
      ["first", late!.memberKey, 0, "succeeded"],
      ["first", late!.memberKey, 1, "succeeded"],
      ["second", "m0@contoso.test", 0, "succeeded"],
      ["second", late!.memberKey, 0, "succeeded"],
    ]);
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed", "completed"]);
  });

  it("member-added handled before the phase-due of a just-dispatched phase does not complete it early", async () => {
    const batch = await seedBatch(h.db, runbookYaml(echoPhase), membersWith(1));
    // advanceBatchCommand marks the phase dispatched, then publishes phase-due; a member joins
    // and its member-added is handled before that phase-due.
    await transitionPhase(h.db, batch.phases[0]!.id, "dispatch", { reason: "advanced by operator" });
    const [late] = await insertMembers(h.db, batch.batchId, [
      { memberKey: "late@contoso.test", data: { Upn: "late@contoso.test" } },
    ]);
    const added = { BatchId: batch.batchId, MemberKey: late!.memberKey, BatchMemberId: late!.id };
    await deliverEvent(h.orchestrator, "member-added", added, `member-added:${late!.id}`);
    await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps.every((step) => step.status === "succeeded"),
      "whatever member-added dispatched to finish",
    );
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["dispatched"]);
    await deliverEvent(
      h.orchestrator,
      "phase-due",
      phaseDueBody(batch, 0),
      `phase-due:${batch.phases[0]!.id}`,
    );

    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
    const steps = await stepsOf(h.db, batch.batchId);
    expect(steps.map((s) => [s.memberKey, s.status])).toEqual([
      ["m0@contoso.test", "succeeded"],
      [late!.memberKey, "succeeded"],
    ]);
    expect(await transitionsOf(h.db, "phase", batch.phases[0]!.id)).toEqual([
      "pending→dispatched",
      "dispatched→completed",
    ]);
  });
});
