import { redriveBatch } from "@matoolkit/commands";
import { transitionPhase, type Db } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deliverEvent,
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
import { batchStatus, memberStatuses, stepsOf, transitionsOf } from "../test/test-queries.ts";

/**
 * Issue 30, `for_each:`: a member's step runs once per value of a list (here the multi-valued
 * column Groups, or an earlier step's output). The values' executions share the step's index,
 * start together when the step's turn comes, each with its own job, retries and events; the next
 * step waits for all of them. No values: the step is skipped. One value failing for good fails the
 * member and cancels its other values, as any step failure does.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.stop();
});

const SOURCE = `  multi_valued_columns:
    - { name: Groups, format: semicolon_delimited }
  columns: [Kind]
`;

const step = (name: string, ...extra: string[]) =>
  [
    `      - name: ${name}`,
    "        worker_id: worker-01",
    "        function: Test-Echo",
    "        params:",
    `          Step: ${name}`,
    ...extra.map((line) => `        ${line}`),
  ].join("\n");

async function runPhase(batch: SeededBatch, index: number): Promise<void> {
  const phase = batch.phases[index]!;
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, index), `phase-due:${phase.id}`);
  await eventually(
    () => phaseOutcome(h.db, phase.id),
    (row) => row.status === "completed" || row.status === "failed",
    `phase ${phase.phaseName} to end`,
  );
}

function phaseOutcome(db: Db, id: number) {
  return db
    .selectFrom("phaseExecutions")
    .select(["status", "outcome", "succeededMembers", "failedMembers"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
}

/** The steps of a member as `name[item/count]:status`, in phase, step and item order. */
async function pathsOf(batch: SeededBatch): Promise<Record<string, string[]>> {
  const paths: Record<string, string[]> = {};
  for (const s of await stepsOf(h.db, batch.batchId)) {
    const item = s.itemCount === null ? "" : `[${s.itemIndex + 1}/${s.itemCount}]`;
    (paths[s.memberKey] ??= []).push(`${s.stepName}${item}:${s.status}`);
  }
  return paths;
}

async function reasonOf(db: Db, stepId: number, toStatus: string): Promise<string | null> {
  const row = await db
    .selectFrom("events")
    .select("reason")
    .where("entity", "=", "step")
    .where("entityId", "=", stepId)
    .where("toStatus", "=", toStatus)
    .executeTakeFirst();
  return row?.reason ?? null;
}

describe("for_each: on a multi-valued column", () => {
  it("runs a step per value (3 groups) or skips it (none); the next step waits for all; phase and batch complete", async () => {
    const yaml = runbookYaml(`${SOURCE}phases:
  - name: groups
    offset: T-0
    steps:
${step("check")}
      - name: add-to-group
        worker_id: worker-01
        function: Test-Echo
        for_each: "{{Groups}}"
        params:
          Group: "{{item}}"
          User: "{{Upn}}"
${step("finish")}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ Groups: index === 0 ? ["Sales", "Finance", "All Staff"] : [] })),
    );
    await runPhase(batch, 0);

    expect(await pathsOf(batch)).toEqual({
      "m0@contoso.test": [
        "check:succeeded",
        "add-to-group[1/3]:succeeded",
        "add-to-group[2/3]:succeeded",
        "add-to-group[3/3]:succeeded",
        "finish:succeeded",
      ],
      "m1@contoso.test": ["check:succeeded", "add-to-group:skipped", "finish:succeeded"],
    });
    const steps = await stepsOf(h.db, batch.batchId);
    const adds = steps.filter((s) => s.memberKey === "m0@contoso.test" && s.stepName === "add-to-group");
    expect(adds.map((s) => [s.stepIndex, s.itemIndex, s.itemValue, s.paramsJson])).toEqual([
      [1, 0, "Sales", { Group: "Sales", User: "m0@contoso.test" }],
      [1, 1, "Finance", { Group: "Finance", User: "m0@contoso.test" }],
      [1, 2, "All Staff", { Group: "All Staff", User: "m0@contoso.test" }],
    ]);
    // One job per value, each its own id (the message ids derive from them).
    const jobIds = adds.map((s) => s.jobId);
    expect(new Set(jobIds).size).toBe(3);
    expect(jobIds).toEqual(adds.map((s) => `step-${s.id}`));
    const calls = h.calls.filter((call) => adds.some((s) => s.id === call.stepExecutionId));
    expect(calls.map((call) => call.params.Group).sort()).toEqual(["All Staff", "Finance", "Sales"]);
    // finish started only once every value had succeeded.
    const finish = steps.find((s) => s.memberKey === "m0@contoso.test" && s.stepName === "finish")!;
    for (const add of adds)
      expect(finish.dispatchedAt!.getTime()).toBeGreaterThanOrEqual(add.completedAt!.getTime());

    const skipped = steps.find((s) => s.memberKey === "m1@contoso.test" && s.stepName === "add-to-group")!;
    expect(skipped).toMatchObject({ jobId: null, itemCount: null, itemValue: null });
    expect(await transitionsOf(h.db, "step", skipped.id)).toEqual(["pending→skipped"]);
    expect(await reasonOf(h.db, skipped.id, "skipped")).toBe("for_each: {{Groups}} has no values");

    expect(await phaseOutcome(h.db, batch.phases[0]!.id)).toEqual({
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
  });

  it("decides when: first: a false condition skips the step whatever its values", async () => {
    const yaml = runbookYaml(`${SOURCE}phases:
  - name: groups
    offset: T-0
    steps:
      - name: add-to-group
        worker_id: worker-01
        function: Test-Echo
        when: "{{Kind}} == 'user'"
        for_each: "{{Groups}}"
        params:
          Group: "{{item}}"
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ Kind: index === 0 ? "user" : "room", Groups: ["A", "B"] })),
    );
    await runPhase(batch, 0);
    expect(await pathsOf(batch)).toEqual({
      "m0@contoso.test": ["add-to-group[1/2]:succeeded", "add-to-group[2/2]:succeeded"],
      "m1@contoso.test": ["add-to-group:skipped"],
    });
    const skipped = (await stepsOf(h.db, batch.batchId)).find((s) => s.memberKey === "m1@contoso.test")!;
    expect(await reasonOf(h.db, skipped.id, "skipped")).toBe("when: {{Kind}} == 'user' is false");
  });

  it("runs per value of an earlier step's output list", async () => {
    const yaml = runbookYaml(`${SOURCE}phases:
  - name: licenses
    offset: T-0
    steps:
      - name: find
        worker_id: worker-01
        function: Test-Echo
        params:
          Skus: ["E3", "Visio"]
        output_params:
          Skus: Skus
      - name: assign
        worker_id: worker-01
        function: Test-Echo
        for_each: "{{Skus}}"
        params:
          Sku: "{{item}}"
`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    await runPhase(batch, 0);
    const steps = await stepsOf(h.db, batch.batchId);
    expect(steps.map((s) => [s.stepName, s.itemIndex, s.status, s.paramsJson])).toEqual([
      ["find", 0, "succeeded", { Skus: ["E3", "Visio"] }],
      ["assign", 0, "succeeded", { Sku: "E3" }],
      ["assign", 1, "succeeded", { Sku: "Visio" }],
    ]);
  });
});

describe("for_each: retries and failures", () => {
  it("retries a value on its own; a value failing for good fails the member and cancels its other values", async () => {
    // FailTimes comes from the value: "1" fails once then succeeds, "9" never succeeds in time.
    // m1's other values wait on a gate that stays shut, so they are in flight when "9" fails.
    const yaml = runbookYaml(`${SOURCE}rollbacks:
  undo-add:
    - name: remove-from-group
      worker_id: worker-01
      function: Test-Echo
      params:
        Group: "{{item}}"
phases:
  - name: groups
    offset: T-0
    steps:
      - name: add-to-group
        worker_id: worker-01
        function: Hold
        for_each: "{{Groups}}"
        on_failure: undo-add
        retry: { max_retries: 1, interval: 1s }
        params:
          Gate: "gate-{{Upn}}"
          FailTimes: "{{item}}"
${step("finish")}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ Groups: index === 0 ? ["0", "1", "0"] : ["0", "9", "0"] })),
    );
    h.open("gate-m0@contoso.test");
    await runPhase(batch, 0);

    expect(await pathsOf(batch)).toEqual({
      "m0@contoso.test": [
        "add-to-group[1/3]:succeeded",
        "add-to-group[2/3]:succeeded",
        "add-to-group[3/3]:succeeded",
        "finish:succeeded",
      ],
      "m1@contoso.test": [
        "add-to-group[1/3]:cancelled",
        "add-to-group[2/3]:failed",
        "add-to-group[3/3]:cancelled",
        "finish:cancelled",
      ],
    });
    const steps = await stepsOf(h.db, batch.batchId);
    const of = (member: string, item: number) =>
      steps.find((s) => s.memberKey === member && s.stepName === "add-to-group" && s.itemIndex === item)!;
    // m0: only the value that failed once was retried.
    expect([0, 1, 2].map((item) => of("m0@contoso.test", item).retryCount)).toEqual([0, 1, 0]);
    expect(of("m0@contoso.test", 1).jobId).toBe(`step-${of("m0@contoso.test", 1).id}-retry-1`);
    // m1: the failing value used its retry, then failed the member; the others were cut off in flight.
    expect(of("m1@contoso.test", 1)).toMatchObject({ status: "failed", retryCount: 1 });
    expect(await transitionsOf(h.db, "step", of("m1@contoso.test", 0).id)).toEqual([
      "pending→dispatched",
      "dispatched→cancelled",
    ]);
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({
      "m0@contoso.test": "active",
      "m1@contoso.test": "failed",
    });
    // The failed value's rollback ran with its own {{item}}.
    await eventually(
      () => Promise.resolve(h.calls.filter((call) => call.params.Group === "9")),
      (calls) => calls.length === 1,
      "the failed value's rollback",
    );
    expect(await phaseOutcome(h.db, batch.phases[0]!.id)).toEqual({
      status: "completed",
      outcome: "partially_succeeded",
      succeededMembers: 1,
      failedMembers: 1,
    });
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
    h.open("gate-m1@contoso.test");
  });

  it("refuses more than 1,000 values at dispatch: the member fails with for_each.too_many, nothing expanded", async () => {
    const yaml = runbookYaml(`${SOURCE}phases:
  - name: groups
    offset: T-0
    steps:
      - name: add-to-group
        worker_id: worker-01
        function: Test-Echo
        for_each: "{{Groups}}"
        params:
          Group: "{{item}}"
`);
    const many = Array.from({ length: 1001 }, (_, index) => `g${index}`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ Groups: index === 0 ? many : ["only"] })),
    );
    await runPhase(batch, 0);
    expect(await pathsOf(batch)).toEqual({
      "m0@contoso.test": ["add-to-group:failed"],
      "m1@contoso.test": ["add-to-group[1/1]:succeeded"],
    });
    const failed = (await stepsOf(h.db, batch.batchId)).find((s) => s.memberKey === "m0@contoso.test")!;
    expect(failed).toMatchObject({
      errorCode: "for_each.too_many",
      errorMessage: "for_each: {{Groups}} has 1001 values; a step expands to at most 1000",
      jobId: null,
    });
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({
      "m0@contoso.test": "failed",
      "m1@contoso.test": "active",
    });
  });
});

describe("for_each: exactly once", () => {
  it("three phase-due deliveries handled in parallel expand each member's step once and send each value once", async () => {
    const yaml = runbookYaml(`${SOURCE}phases:
  - name: groups
    offset: T-0
    steps:
      - name: add-to-group
        worker_id: worker-01
        function: Test-Echo
        for_each: "{{Groups}}"
        params:
          Group: "{{item}}"
${step("finish")}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(4, (index) => ({ Groups: ["A", "B", "C", "D"].slice(0, index + 1) })),
    );
    await transitionPhase(h.db, batch.phases[0]!.id, "dispatch", { reason: "advanced by operator" });
    const body = phaseDueBody(batch, 0);
    await Promise.all(
      [1, 2, 3].map((n) => deliverEvent(h.orchestrator, "phase-due", body, `for-each-parallel-${n}`)),
    );
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
    const steps = await stepsOf(h.db, batch.batchId);
    // 1 + 2 + 3 + 4 values, and a finish per member.
    expect(steps.filter((s) => s.stepName === "add-to-group")).toHaveLength(10);
    expect(steps).toHaveLength(14);
    for (const s of steps)
      expect(await transitionsOf(h.db, "step", s.id)).toEqual(["pending→dispatched", "dispatched→succeeded"]);
    const ids = new Set(steps.map((s) => s.id));
    const jobs = h.calls.filter((call) => !call.isInitStep && ids.has(call.stepExecutionId));
    expect(jobs.map((call) => call.jobId).sort()).toEqual(steps.map((s) => `step-${s.id}`).sort());
  });

  it("a redriven member runs its failed and cancelled values again, not its succeeded ones, and goes on", async () => {
    // Test-Flaky fails the first call of each execution: with no retry, the first value to fail
    // fails the member (the other may fail or be cancelled); the redrive's second calls succeed.
    const yaml = runbookYaml(`${SOURCE}phases:
  - name: groups
    offset: T-0
    steps:
${step("check")}
      - name: add-to-group
        worker_id: worker-01
        function: Test-Flaky
        for_each: "{{Groups}}"
        params:
          FailTimes: 1
          Group: "{{item}}"
${step("finish")}
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(1, () => ({ Groups: ["A", "B"] })),
    );
    await runPhase(batch, 0);
    const before = await pathsOf(batch);
    expect(before["m0@contoso.test"]![0]).toBe("check:succeeded");
    expect(before["m0@contoso.test"]!.slice(1, 3).every((path) => /:(failed|cancelled)$/.test(path))).toBe(
      true,
    );
    expect(before["m0@contoso.test"]![3]).toBe("finish:cancelled");
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed" || status === "failed",
      "batch to end",
    );

    const outcome = await h.db.transaction().execute((trx) =>
      redriveBatch(trx, {
        batchId: batch.batchId,
        target: { kind: "members", memberIds: [batch.members[0]!.id] },
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
      "m0@contoso.test": [
        "check:succeeded",
        "add-to-group[1/2]:succeeded",
        "add-to-group[2/2]:succeeded",
        "finish:succeeded",
      ],
    });
    const steps = await stepsOf(h.db, batch.batchId);
    // check ran once: the redrive reopened only what had not succeeded.
    expect(await transitionsOf(h.db, "step", steps[0]!.id)).toEqual([
      "pending→dispatched",
      "dispatched→succeeded",
    ]);
    for (const value of steps.filter((s) => s.stepName === "add-to-group"))
      expect(value.jobId).toBe(`step-${value.id}-redrive-1`);
  });
});
