import { insertSteps, listMembers, listPhases, transitionMember, transitionStep } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";

/** GET /api/batches/{id}/grid and …/progress: the dashboard's grid and chart reads (issue 13). */
let harness: ApiHarness;
const runbook = "gridded";

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({ name: runbook, phases: ["first", "second"] });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});

afterAll(async () => {
  await harness?.stop();
});

async function newBatch(keys: readonly string[]): Promise<number> {
  const response = await harness.request("POST", `/batches?runbook=${runbook}`, {
    body: `UserPrincipalName\n${keys.join("\n")}\n`,
    type: "text/csv",
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

/** Creates `phase`'s step for every member, as phase-due does; returns the step ids in member order. */
async function phaseSteps(batchId: number, phase: "first" | "second"): Promise<number[]> {
  const phaseRow = (await listPhases(harness.db, batchId)).find((row) => row.phaseName === phase)!;
  const members = await listMembers(harness.db, batchId);
  await insertSteps(
    harness.db,
    members.map((member) => ({
      batchId,
      phaseExecutionId: phaseRow.id,
      batchMemberId: member.id,
      stepName: `${phase}-step`,
      stepIndex: 0,
      workerId: "worker-01",
      functionName: "Test-Echo",
    })),
  );
  const rows = await harness.db
    .selectFrom("stepExecutions")
    .select("id")
    .where("phaseExecutionId", "=", phaseRow.id)
    .orderBy("batchMemberId")
    .execute();
  return rows.map((row) => row.id);
}

async function endStep(stepId: number, event: "succeed" | "fail", set: Record<string, unknown>) {
  expect(await transitionStep(harness.db, stepId, "dispatch")).toBeDefined();
  expect(await transitionStep(harness.db, stepId, event, { set })).toBeDefined();
}

describe("GET /api/batches/{id}/grid", () => {
  it("answers the columns in runbook order, the member total and a page of members with their steps", async () => {
    const batchId = await newBatch(["a@contoso.test", "b@contoso.test", "c@contoso.test"]);
    const [s0, s1] = await phaseSteps(batchId, "first");
    await endStep(s0!, "succeed", { completedAt: new Date("2026-01-01T10:00:00Z") });
    await endStep(s1!, "fail", {
      errorCode: "graph.throttled",
      errorMessage: "too many requests for [email]",
      retryCount: 2,
      completedAt: new Date("2026-01-01T10:00:05Z"),
    });

    const response = await harness.request("GET", `/batches/${batchId}/grid?offset=1&limit=1`, {
      token: harness.readerToken,
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      batchId,
      memberTotal: 3,
      offset: 1,
      columns: [
        { phaseName: "first", stepName: "first-step" },
        { phaseName: "second", stepName: "second-step" },
      ],
    });
    expect(response.body.members).toHaveLength(1);
    expect(response.body.members[0]).toMatchObject({ memberKey: "b@contoso.test", status: "active" });
    expect(response.body.members[0].steps).toEqual([
      {
        id: s1,
        phaseName: "first",
        stepName: "first-step",
        status: "failed",
        errorCode: "graph.throttled",
        errorMessage: "too many requests for [email]",
        retryCount: 2,
        pollCount: 0,
        redriveCount: 0,
        completedAt: "2026-01-01T10:00:05.000Z",
        itemCount: null,
        itemsDone: 0,
      },
    ]);
  });

  it("lists members without steps yet with an empty list, past the end an empty page", async () => {
    const batchId = await newBatch(["x@contoso.test", "y@contoso.test"]);
    const all = await harness.request("GET", `/batches/${batchId}/grid`);
    expect(all.body.members.map((m: any) => [m.memberKey, m.steps])).toEqual([
      ["x@contoso.test", []],
      ["y@contoso.test", []],
    ]);
    const past = await harness.request("GET", `/batches/${batchId}/grid?offset=5`);
    expect(past.body).toMatchObject({ memberTotal: 2, offset: 5, members: [] });
  });

  it("keeps only the members in memberStatus, counting rows and offsets within them", async () => {
    const batchId = await newBatch([
      "f1@contoso.test",
      "ok@contoso.test",
      "f2@contoso.test",
      "f3@contoso.test",
    ]);
    const members = await listMembers(harness.db, batchId);
    for (const index of [0, 2, 3]) await transitionMember(harness.db, members[index]!.id, "fail");
    const failed = await harness.request(
      "GET",
      `/batches/${batchId}/grid?memberStatus=failed&offset=1&limit=5`,
    );
    expect(failed.status).toBe(200);
    expect(failed.body.memberTotal).toBe(3);
    expect(failed.body.members.map((m: any) => [m.memberKey, m.status])).toEqual([
      ["f2@contoso.test", "failed"],
      ["f3@contoso.test", "failed"],
    ]);
    const active = await harness.request("GET", `/batches/${batchId}/grid?memberStatus=active`);
    expect([active.body.memberTotal, active.body.members.map((m: any) => m.memberKey)]).toEqual([
      1,
      ["ok@contoso.test"],
    ]);
  });

  it("answers 404 for a batch that does not exist and 400 naming a bad limit or member status", async () => {
    expect((await harness.request("GET", "/batches/999999/grid")).body.code).toBe("resource.not_found");
    const bad = await harness.request("GET", "/batches/1/grid?limit=1001");
    expect([bad.status, bad.body.code]).toEqual([400, "validation.invalid_input"]);
    const status = await harness.request("GET", "/batches/1/grid?memberStatus=broken");
    expect([status.status, status.body.code]).toEqual([400, "validation.invalid_input"]);
    expect(status.body.detail).toContain("'memberStatus'");
    for (const allowed of ["active", "failed", "removed"]) expect(status.body.detail).toContain(allowed);
  });
});

describe("GET /api/batches/{id}/progress", () => {
  it("counts a member through once every step succeeded, a failed member at its failure, cumulatively", async () => {
    const batchId = await newBatch(["p@contoso.test", "q@contoso.test", "r@contoso.test", "s@contoso.test"]);
    const members = await listMembers(harness.db, batchId);
    const first = await phaseSteps(batchId, "first");
    const second = await phaseSteps(batchId, "second");
    // p: both steps by 10:00:03. q: both by 10:00:07. r: only the first (not through). s: failed.
    await endStep(first[0]!, "succeed", { completedAt: new Date("2026-01-01T10:00:01Z") });
    await endStep(second[0]!, "succeed", { completedAt: new Date("2026-01-01T10:00:03.400Z") });
    await endStep(first[1]!, "succeed", { completedAt: new Date("2026-01-01T10:00:02Z") });
    await endStep(second[1]!, "succeed", { completedAt: new Date("2026-01-01T10:00:07Z") });
    await endStep(first[2]!, "succeed", { completedAt: new Date("2026-01-01T10:00:02Z") });
    expect(await transitionMember(harness.db, members[3]!.id, "fail")).toBeDefined();
    await harness.db
      .updateTable("batchMembers")
      .set({ failedAt: new Date("2026-01-01T10:00:05Z") })
      .where("id", "=", members[3]!.id)
      .execute();

    const response = await harness.request("GET", `/batches/${batchId}/progress`, {
      token: harness.readerToken,
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      batchId,
      memberTotal: 4,
      points: [
        { at: "2026-01-01T10:00:03.000Z", succeeded: 1, failed: 0 },
        { at: "2026-01-01T10:00:05.000Z", succeeded: 1, failed: 1 },
        { at: "2026-01-01T10:00:07.000Z", succeeded: 2, failed: 1 },
      ],
    });
  });

  it("shows a step its when: skipped (issue 30) as skipped in the grid, the report and the phase counts, and as done", async () => {
    const batchId = await newBatch(["k@contoso.test", "l@contoso.test"]);
    const first = await phaseSteps(batchId, "first");
    const second = await phaseSteps(batchId, "second");
    await endStep(first[0]!, "succeed", { completedAt: new Date("2026-01-01T10:00:01Z") });
    const at = new Date("2026-01-01T10:00:02Z");
    const reason = "when: {{HasMailbox}} == 'true' is false";
    expect(
      await transitionStep(harness.db, first[1]!, "skip", { reason, set: { completedAt: at } }),
    ).toBeDefined();
    await endStep(second[0]!, "succeed", { completedAt: new Date("2026-01-01T10:00:03Z") });
    expect(
      await transitionStep(harness.db, second[1]!, "skip", { reason, set: { completedAt: at } }),
    ).toBeDefined();

    const grid = await harness.request("GET", `/batches/${batchId}/grid`, { token: harness.readerToken });
    expect(grid.body.members[1].steps.map((step: { status: string }) => step.status)).toEqual([
      "skipped",
      "skipped",
    ]);
    // Through once every step succeeded or was skipped: l, whose steps were all skipped, too.
    const progress = await harness.request("GET", `/batches/${batchId}/progress`, {
      token: harness.readerToken,
    });
    expect(progress.body.points).toEqual([
      { at: "2026-01-01T10:00:02.000Z", succeeded: 1, failed: 0 },
      { at: "2026-01-01T10:00:03.000Z", succeeded: 2, failed: 0 },
    ]);
    const detail = await harness.request("GET", `/batches/${batchId}`, { token: harness.readerToken });
    expect(detail.body.phases.map((phase: { memberCounts: unknown }) => phase.memberCounts)).toEqual([
      { succeeded: 1, skipped: 1, failed: 0, cancelled: 0, running: 0 },
      { succeeded: 1, skipped: 1, failed: 0, cancelled: 0, running: 0 },
    ]);
    const report = await fetch(`${harness.url}/api/batches/${batchId}/report.csv`, {
      headers: { authorization: `Bearer ${harness.readerToken}` },
    });
    const lines = (await report.text()).trimEnd().split(/\r?\n/);
    expect(lines[2]).toMatch(
      /,l@contoso\.test,active,skipped,,2026-01-01T10:00:02\.000Z,skipped,,2026-01-01T10:00:02\.000Z,$/,
    );
    const events = await harness.request("GET", `/batches/${batchId}/events`, { token: harness.readerToken });
    expect(
      events.body.items
        .filter((event: { toStatus: string }) => event.toStatus === "skipped")
        .map((event: { entityId: number; reason: string }) => [event.entityId, event.reason]),
    ).toEqual([
      [first[1], reason],
      [second[1], reason],
    ]);
  });

  it("answers 404 for a batch that does not exist", async () => {
    const response = await harness.request("GET", "/batches/999999/progress");
    expect([response.status, response.body.code]).toEqual([404, "resource.not_found"]);
  });
});
