import {
  insertInits,
  insertSteps,
  listInitsByBatch,
  listMembers,
  listPhases,
  listStepsByBatch,
  recordRollbackStep,
  transitionInit,
  transitionMember,
  transitionPhase,
  transitionStep,
} from "@matoolkit/db";
import type { ExecutionEvent } from "@matoolkit/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

/** Member counts on the batch and phase read models, the events timeline, rollbacks on steps. */
let harness: ApiHarness;

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({ name: "readable", phases: ["first", "second"] });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});

afterAll(async () => {
  await harness?.stop();
});

async function newBatch(memberCount: number): Promise<number> {
  const csv = ["UserPrincipalName", ...Array.from({ length: memberCount }, (_, i) => `m${i}@contoso.test`)];
  const response = await harness.request("POST", "/batches?runbook=readable", {
    body: `${csv.join("\n")}\n`,
    type: "text/csv",
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

/** One step per member (and index) in the phase; returns the rows in member order. */
async function stepsFor(batchId: number, phaseId: number, perMember: number) {
  const members = await listMembers(harness.db, batchId);
  await insertSteps(
    harness.db,
    members.flatMap((member) =>
      Array.from({ length: perMember }, (_, stepIndex) => ({
        batchId,
        phaseExecutionId: phaseId,
        batchMemberId: member.id,
        stepName: `step-${stepIndex}`,
        stepIndex,
        workerId: "worker-01",
        functionName: "Test-Echo",
        onFailure: "undo",
      })),
    ),
  );
  return (await listStepsByBatch(harness.db, batchId, { limit: 100, offset: 0 })).filter(
    (step) => step.phaseExecutionId === phaseId,
  );
}

async function walk(stepId: number, events: readonly ExecutionEvent[]) {
  for (const event of events) expect(await transitionStep(harness.db, stepId, event)).toBeDefined();
}

describe("member counts", () => {
  it("show partial success per phase and members by status on the batch, and per phase on /phases", async () => {
    const id = await newBatch(5);
    const [first, second] = await listPhases(harness.db, id);
    await transitionPhase(harness.db, first!.id, "dispatch");
    const steps = await stepsFor(id, first!.id, 2);
    const ofMember = (index: number) => steps.slice(index * 2, index * 2 + 2);
    // m0 succeeded; m1 failed (its next step cancelled); m2 removed mid-phase; m3 and m4 still running.
    await walk(ofMember(0)[0]!.id, ["dispatch", "succeed"]);
    await walk(ofMember(0)[1]!.id, ["dispatch", "succeed"]);
    await walk(ofMember(1)[0]!.id, ["dispatch", "fail"]);
    await walk(ofMember(1)[1]!.id, ["cancel"]);
    await walk(ofMember(2)[0]!.id, ["dispatch", "succeed"]);
    await walk(ofMember(2)[1]!.id, ["cancel"]);
    await walk(ofMember(3)[0]!.id, ["dispatch"]);
    const members = await listMembers(harness.db, id);
    await transitionMember(harness.db, members[1]!.id, "fail");
    await transitionMember(harness.db, members[2]!.id, "remove");

    const detail = await harness.request("GET", `/batches/${id}`, { token: harness.readerToken });
    expect(detail.status).toBe(200);
    expect(detail.body.memberCounts).toEqual({ active: 3, failed: 1, removed: 1 });
    // Phases without an approval gate (issue 30) say so.
    const ungated = { approvalRequired: false, approvalExpiresAt: null, approvalDecision: null };
    expect(detail.body.phases).toEqual([
      {
        id: first!.id,
        phaseName: "first",
        sequence: 0,
        status: "dispatched",
        dueAt: null,
        // Issue 12: set when the phase ends.
        outcome: null,
        succeededMembers: null,
        failedMembers: null,
        ...ungated,
        memberCounts: { succeeded: 1, skipped: 0, failed: 1, cancelled: 1, running: 2 },
      },
      {
        id: second!.id,
        phaseName: "second",
        sequence: 1,
        status: "pending",
        dueAt: null,
        outcome: null,
        succeededMembers: null,
        failedMembers: null,
        ...ungated,
        memberCounts: { succeeded: 0, skipped: 0, failed: 0, cancelled: 0, running: 0 },
      },
    ]);
    expect(detail.body).not.toHaveProperty("yamlContent");

    const phases = await harness.request("GET", `/batches/${id}/phases`);
    expect(phases.body.map((p: Json) => [p.phaseName, p.runbookVersion, p.memberCounts])).toEqual([
      ["first", 1, { succeeded: 1, skipped: 0, failed: 1, cancelled: 1, running: 2 }],
      ["second", 1, { succeeded: 0, skipped: 0, failed: 0, cancelled: 0, running: 0 }],
    ]);
  });
});

describe("GET /api/batches/{id}/steps rollbacks", () => {
  it("shows the rollback sent for a failed step or init, and null for the others", async () => {
    const id = await newBatch(2);
    const [first] = await listPhases(harness.db, id);
    const [failed, fine] = await stepsFor(id, first!.id, 1);
    await walk(failed!.id, ["dispatch", "fail"]);
    await insertInits(harness.db, [
      {
        batchId: id,
        runbookVersion: 1,
        stepIndex: 0,
        stepName: "group",
        workerId: "w",
        functionName: "F",
        onFailure: "ungroup",
      },
    ]);
    const [init] = await listInitsByBatch(harness.db, id);
    await transitionInit(harness.db, init!.id, "dispatch");
    await transitionInit(harness.db, init!.id, "fail");
    // As the orchestrator records them when it sends a rollback (failure.ts).
    const base = { batchId: id, executionStatus: "failed", index: 0, total: 1 } as const;
    await recordRollbackStep(harness.db, {
      ...base,
      entity: "step",
      executionId: failed!.id,
      sequence: "undo",
      stepName: "restore",
      outcome: { sent: true, jobId: `rollback-step-${failed!.id}-0-0` },
    });
    await recordRollbackStep(harness.db, {
      ...base,
      entity: "init",
      executionId: init!.id,
      sequence: "ungroup",
      stepName: "delete-group",
      outcome: { sent: false, reason: "template.unresolved" },
    });

    const response = await harness.request("GET", `/batches/${id}/steps`, { token: harness.readerToken });
    expect(response.status).toBe(200);
    const [withRollback, without] = response.body.steps;
    expect(withRollback).toMatchObject({ id: failed!.id, status: "failed" });
    expect(withRollback.rollback).toEqual({
      name: "undo",
      dispatchedAt: expect.any(String),
      steps: [
        {
          position: 1,
          stepName: "restore",
          jobId: `rollback-step-${failed!.id}-0-0`,
          sent: true,
          reason: null,
          at: withRollback.rollback.dispatchedAt,
        },
      ],
    });
    expect(without).toMatchObject({ id: fine!.id, rollback: null });
    expect(response.body.init[0].rollback).toMatchObject({
      name: "ungroup",
      dispatchedAt: null,
      steps: [{ stepName: "delete-group", sent: false, jobId: null, reason: "template.unresolved" }],
    });
  });
});

describe("GET /api/batches/{id}/events", () => {
  it("pages through the batch's timeline in id order with afterId / nextAfterId", async () => {
    const id = await newBatch(2);
    expect((await harness.request("POST", `/batches/${id}/advance`)).status).toBe(202);
    const all = await harness.request("GET", `/batches/${id}/events?limit=1000`, {
      token: harness.readerToken,
    });
    expect(all.status).toBe(200);
    expect(all.body.nextAfterId).toBeNull();
    const items: Json[] = all.body.items;
    // created → active (no init) → first phase dispatched.
    expect(items.map((e) => `${e.entity}:${e.fromStatus ?? "∅"}→${e.toStatus}`)).toEqual([
      "batch:∅→detected",
      "batch:detected→active",
      "phase:pending→dispatched",
    ]);
    expect(items[0]).toMatchObject({ batchId: id, entityId: id, reason: "created", at: expect.any(String) });

    const pages: Json[][] = [];
    let afterId: number | null = 0;
    while (afterId !== null) {
      const page: Json = await harness.request("GET", `/batches/${id}/events?limit=2&afterId=${afterId}`);
      pages.push(page.body.items);
      afterId = page.body.nextAfterId;
    }
    expect(pages.map((page) => page.length)).toEqual([2, 1]);
    expect(pages.flat()).toEqual(items);

    // Polling from the last id seen returns only what is new.
    const last = items.at(-1).id;
    expect((await harness.request("GET", `/batches/${id}/events?afterId=${last}`)).body).toEqual({
      items: [],
      nextAfterId: null,
    });
  });

  it("names the member, phase and step each event is about, for a Reader as the grid shows them", async () => {
    const id = await newBatch(2);
    const [first] = await listPhases(harness.db, id);
    await transitionPhase(harness.db, first!.id, "dispatch");
    const [step] = await stepsFor(id, first!.id, 1);
    await walk(step!.id, ["dispatch"]);
    const members = await listMembers(harness.db, id);
    await transitionMember(harness.db, members[1]!.id, "remove");
    await insertInits(harness.db, [
      { batchId: id, runbookVersion: 1, stepIndex: 0, stepName: "group", workerId: "w", functionName: "F" },
    ]);
    const [init] = await listInitsByBatch(harness.db, id);
    await transitionInit(harness.db, init!.id, "dispatch");

    const page = await harness.request("GET", `/batches/${id}/events?limit=1000`, {
      token: harness.readerToken,
    });
    expect(page.status).toBe(200);
    const grid = await harness.request("GET", `/batches/${id}/grid`, { token: harness.readerToken });
    const gridKeys: string[] = grid.body.members.map((member: Json) => member.memberKey);
    const named = page.body.items.map((e: Json) => [
      e.entity,
      e.entityId,
      e.memberKey,
      e.phaseName,
      e.stepName,
    ]);
    // The batch's own events (created, then the phase's dispatch moving it) name nothing else.
    expect(named.filter(([entity]: Json[]) => entity === "batch")).toEqual([
      ["batch", id, null, null, null],
      ["batch", id, null, null, null],
    ]);
    expect(named.filter(([entity]: Json[]) => entity !== "batch")).toEqual([
      ["phase", first!.id, null, "first", null],
      ["step", step!.id, gridKeys[0], "first", "step-0"],
      ["member", members[1]!.id, gridKeys[1], null, null],
      ["init", init!.id, null, null, "group"],
    ]);
    expect(gridKeys).toEqual(["m0@contoso.test", "m1@contoso.test"]);
  });

  it.each([
    ["limit=0", "'limit'"],
    ["limit=1001", "'limit'"],
    ["limit=ten", "'limit'"],
    ["afterId=-1", "'afterId'"],
    ["afterId=1.5", "'afterId'"],
    ["afterId=", "'afterId'"],
  ])("rejects %s naming the parameter", async (query, name) => {
    const id = await newBatch(1);
    const response = await harness.request("GET", `/batches/${id}/events?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("validation.invalid_input");
    expect(response.body.detail).toContain(name);
  });

  it("answers an unknown batch with 404", async () => {
    expect((await harness.request("GET", "/batches/999999/events")).status).toBe(404);
  });
});
