import { listEvents, listPhases, transitionPhase } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

/**
 * POST /api/batches/{id}/phases/{seq}/approve and …/reject (issue 30), and the advance of a gated
 * phase. The harness runs no orchestrator: the assertions read what the commands wrote (statuses,
 * events with their actor, outbox); the orchestrator's side is in approval-gates.scenarios.test.ts.
 */
let harness: ApiHarness;
const members = "UserPrincipalName\nadele@contoso.test\nalex@contoso.test\n";
const OPERATOR = "operator@example.test";

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({
    name: "gated",
    phases: ["pre-checks", "cutover"],
    gatedPhases: ["cutover"],
  });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});

afterAll(async () => {
  await harness?.stop();
});

/** A new manual batch with pre-checks completed and cutover advanced into its gate. */
async function batchAtGate(): Promise<number> {
  const created = await harness.request("POST", "/batches?runbook=gated", {
    body: members,
    type: "text/csv",
  });
  expect(created.status).toBe(201);
  const id: number = created.body.id;
  expect((await harness.request("POST", `/batches/${id}/advance`)).status).toBe(202);
  const [preChecks] = await listPhases(harness.db, id);
  // The orchestrator is not running here: finish pre-checks as it would.
  await transitionPhase(harness.db, preChecks!.id, "complete");
  const advanced = await harness.request("POST", `/batches/${id}/advance`, { token: harness.operatorToken });
  expect(advanced.status).toBe(202);
  return id;
}

const decide = (
  id: number | string,
  seq: number | string,
  decision: "approve" | "reject",
  options: { token?: string | null; key?: string } = {},
) =>
  harness.request("POST", `/batches/${id}/phases/${seq}/${decision}`, {
    ...(options.token === undefined ? { token: harness.operatorToken } : { token: options.token }),
    ...(options.key === undefined ? {} : { headers: { "Idempotency-Key": options.key } }),
  });

async function outboxIds(pattern: string): Promise<string[]> {
  const rows = await harness.db
    .selectFrom("outbox")
    .select("messageId")
    .where("messageId", "like", pattern)
    .orderBy("id")
    .execute();
  return rows.map((row) => row.messageId);
}

async function cutover(id: number) {
  return (await listPhases(harness.db, id)).find((phase) => phase.phaseName === "cutover")!;
}

async function cutoverEvents(id: number) {
  const phase = await cutover(id);
  return (await listEvents(harness.db, id, { limit: 1000 }))
    .filter((event) => event.entity === "phase" && event.entityId === phase.id)
    .map((event) => [event.fromStatus, event.toStatus, event.reason, event.actor]);
}

function expectProblem(
  response: { status: number; body: Json },
  status: number,
  code: string,
  detail: RegExp,
) {
  expect(response.status).toBe(status);
  expect(response.body.code).toBe(code);
  expect(response.body.detail).toMatch(detail);
}

describe("advancing into a gated phase", () => {
  it("puts it in awaiting_approval with nothing sent, says so, and refuses to advance past it", async () => {
    const created = await harness.request("POST", "/batches?runbook=gated", {
      body: members,
      type: "text/csv",
    });
    const id: number = created.body.id;
    expect((await harness.request("POST", `/batches/${id}/advance`)).status).toBe(202);
    const [preChecks, gate] = await listPhases(harness.db, id);
    await transitionPhase(harness.db, preChecks!.id, "complete");

    const advanced = await harness.request("POST", `/batches/${id}/advance`, {
      token: harness.operatorToken,
    });
    expect(advanced.status).toBe(202);
    expect(advanced.body).toEqual({
      action: "phase",
      batchId: id,
      phaseName: "cutover",
      phaseExecutionId: gate!.id,
      sequence: 1,
      phaseStatus: "awaiting_approval",
    });
    expect(await outboxIds(`phase-due:${gate!.id}%`)).toEqual([]);
    const detail = await harness.request("GET", `/batches/${id}`);
    expect(detail.body.phases[1]).toMatchObject({
      phaseName: "cutover",
      status: "awaiting_approval",
      approvalRequired: true,
      approvalExpiresAt: null,
      approvalDecision: null,
    });
    expect(detail.body.phases[0].approvalRequired).toBe(false);
    expect(detail.body.currentPhase).toBe("cutover");
    const rows = await harness.request("GET", `/batches/${id}/phases`);
    expect(rows.body[1]).toMatchObject({ approvalTimeoutSeconds: null, approvalTimeoutOutcome: null });

    expectProblem(
      await harness.request("POST", `/batches/${id}/advance`),
      409,
      "state.conflict",
      /phase cutover of batch \d+ is awaiting approval; approve or reject it \(POST \/api\/batches\/\d+\/phases\/1\/approve/,
    );
  });
});

describe("POST /api/batches/{id}/phases/{seq}/approve", () => {
  it("dispatches the phase as if it had just fallen due, recording the approver", async () => {
    const id = await batchAtGate();
    const phase = await cutover(id);
    const approved = await decide(id, 1, "approve");
    expect(approved.status).toBe(202);
    expect(approved.body).toEqual({
      batchId: id,
      phaseExecutionId: phase.id,
      phaseName: "cutover",
      sequence: 1,
      status: "dispatched",
      approvalDecision: "approved",
    });
    expect(await outboxIds(`phase-due:${phase.id}%`)).toEqual([`phase-due:${phase.id}`]);
    expect((await outboxIds(`batch-changed:${id}:phase-approved:%`)).length).toBe(1);
    expect((await cutoverEvents(id)).slice(-2)).toEqual([
      ["pending", "awaiting_approval", "advanced by operator: waiting for approval", OPERATOR],
      ["awaiting_approval", "dispatched", "approved by operator", OPERATOR],
    ]);
    // In the audit trail, with the approver.
    const audit = await harness.request("GET", `/audit?batchId=${id}`);
    expect(
      audit.body
        .filter((event: Json) => event.entity === "phase" && event.toStatus === "dispatched")
        .map((event: Json) => [event.fromStatus, event.actor]),
    ).toContainEqual(["awaiting_approval", OPERATOR]);

    // Decided once: a second approve, or a reject, is refused naming the status.
    expectProblem(
      await decide(id, 1, "approve"),
      409,
      "state.conflict",
      /phase cutover \(1\) of batch \d+ is dispatched; only a phase awaiting approval can be approved/,
    );
    expectProblem(await decide(id, 1, "reject"), 409, "state.conflict", /is dispatched; .* can be rejected/);
    expect(await outboxIds(`phase-due:${phase.id}%`)).toHaveLength(1);
  });

  it("refuses a paused batch (resume first) and a cancelled one, writing nothing", async () => {
    const paused = await batchAtGate();
    expect((await harness.request("POST", `/batches/${paused}/pause`)).status).toBe(200);
    const before = (await cutoverEvents(paused)).length;
    expectProblem(
      await decide(paused, 1, "approve"),
      409,
      "state.conflict",
      /batch \d+ is paused; resume it before approving phase cutover \(1\)/,
    );
    expect(await cutoverEvents(paused)).toHaveLength(before);
    expect((await cutover(paused)).status).toBe("awaiting_approval");

    const cancelled = await batchAtGate();
    expect((await harness.request("POST", `/batches/${cancelled}/cancel`)).status).toBe(200);
    expect((await cutover(cancelled)).status).toBe("cancelled");
    expectProblem(
      await decide(cancelled, 1, "approve"),
      409,
      "state.conflict",
      /phase cutover \(1\) of batch \d+ is cancelled \(the batch is cancelled\); only a phase awaiting approval/,
    );
  });

  it("refuses a phase that is not waiting yet, and answers 404 for what does not exist and 400 for a bad seq", async () => {
    const id = await batchAtGate();
    expectProblem(
      await decide(id, 0, "approve"),
      409,
      "state.conflict",
      /phase pre-checks \(0\) .* is completed/,
    );
    expectProblem(
      await decide(id, 7, "approve"),
      404,
      "resource.not_found",
      /has no phase 7 \(its phases are 0 to 1\)/,
    );
    expectProblem(
      await decide(999999, 0, "approve"),
      404,
      "resource.not_found",
      /batch 999999 does not exist/,
    );
    expect((await decide(id, "abc", "approve")).status).toBe(400);
    expect((await decide(id, "-1", "reject")).status).toBe(400);
  });

  it("acts once for a retried request with the same Idempotency-Key, replaying the answer", async () => {
    const id = await batchAtGate();
    const first = await decide(id, 1, "approve", { key: `approve-${id}` });
    const again = await decide(id, 1, "approve", { key: `approve-${id}` });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect((await cutoverEvents(id)).filter(([, to]) => to === "dispatched")).toHaveLength(1);
  });
});

describe("POST /api/batches/{id}/phases/{seq}/reject", () => {
  it("fails the phase with phase.rejected, sending nothing, recording the operator", async () => {
    const id = await batchAtGate();
    const phase = await cutover(id);
    const rejected = await decide(id, 1, "reject");
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ status: "failed", approvalDecision: "rejected", sequence: 1 });
    expect((await cutoverEvents(id)).at(-1)).toEqual([
      "awaiting_approval",
      "failed",
      "phase.rejected: rejected by operator",
      OPERATOR,
    ]);
    expect(await outboxIds(`phase-due:${phase.id}%`)).toEqual([]);
    // The batch workflow is nudged: it runs the completion checks of a batch with a failed phase.
    expect((await outboxIds(`batch-changed:${id}:phase-rejected:%`)).length).toBe(1);
    const detail = await harness.request("GET", `/batches/${id}`);
    expect(detail.body.phases[1]).toMatchObject({
      status: "failed",
      outcome: "failed",
      succeededMembers: 0,
      failedMembers: 0,
      approvalDecision: "rejected",
    });
  });

  it("decides a paused batch's gate too: rejecting sends nothing", async () => {
    const id = await batchAtGate();
    expect((await harness.request("POST", `/batches/${id}/pause`)).status).toBe(200);
    expect((await decide(id, 1, "reject")).status).toBe(200);
    expect((await cutover(id)).status).toBe("failed");
  });
});

describe("who may decide", () => {
  it("lets Operators and Admins approve and reject, not Readers or anonymous callers", async () => {
    const id = await batchAtGate();
    expect((await decide(id, 1, "approve", { token: harness.readerToken })).status).toBe(403);
    expect((await decide(id, 1, "reject", { token: harness.readerToken })).status).toBe(403);
    expect((await decide(id, 1, "approve", { token: null })).status).toBe(401);
    expect((await cutover(id)).status).toBe("awaiting_approval");
    expect((await decide(id, 1, "approve", { token: harness.adminToken })).status).toBe(202);
    expect((await cutoverEvents(id)).at(-1)?.[3]).toBe("admin@example.test");
  });

  it("is described in the OpenAPI document, for Operators and Admins", async () => {
    const document = (await harness.request("GET", "/openapi.json", { token: null })).body;
    for (const [decision, status] of [
      ["approve", "202"],
      ["reject", "200"],
    ] as const) {
      const operation = document.paths[`/api/batches/{id}/phases/{seq}/${decision}`].post;
      expect(operation["x-required-roles"]).toEqual(["Operator", "Admin"]);
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining([status, "404", "409"]));
      expect(operation.parameters.map((parameter: Json) => parameter.name)).toEqual(
        expect.arrayContaining(["id", "seq", "Idempotency-Key"]),
      );
    }
  });
});
