import {
  getBatch,
  getMember,
  getPhase,
  getStep,
  insertInits,
  insertSteps,
  listEvents,
  listMembers,
  listPhases,
  listStepsByBatch,
  markBatchPurged,
  transitionBatch,
  transitionMember,
  transitionPhase,
  transitionStep,
  type StepExecution,
} from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

/**
 * POST /api/batches/{id}/redrive. The harness runs no orchestrator: a batch whose member failed is
 * arranged with the repositories, and the assertions read what the redrive wrote (statuses, events,
 * the outbox). The orchestrator's side (the redriven jobs, late results) is in its redrive scenarios.
 */
let harness: ApiHarness;
const OPERATOR = "operator@example.test";
const members = "UserPrincipalName\nadele@contoso.test\nalex@contoso.test\n";

beforeAll(async () => {
  harness = await startApiHarness();
  for (const yaml of [
    testRunbookYaml({ name: "redrivable", phases: ["only"] }),
    testRunbookYaml({ name: "redrivable-init", phases: ["only"], initWorkerId: "worker-01" }),
  ]) {
    const published = await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" });
    expect(published.status).toBe(201);
  }
});

afterAll(async () => {
  await harness?.stop();
});

async function newBatch(runbook = "redrivable"): Promise<number> {
  const response = await harness.request("POST", `/batches?runbook=${runbook}`, {
    body: members,
    type: "text/csv",
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

interface Arranged {
  readonly batchId: number;
  readonly phaseId: number;
  /** adele: failed at her step; alex: succeeded. */
  readonly adele: { readonly memberId: number; readonly step: StepExecution };
  readonly alex: { readonly memberId: number; readonly step: StepExecution };
}

/** The phase ran: adele's step failed (so did she), alex's succeeded; the phase and batch ended. */
async function batchWithFailedMember(): Promise<Arranged> {
  const batchId = await newBatch();
  expect((await harness.request("POST", `/batches/${batchId}/advance`)).status).toBe(202);
  const [phase] = await listPhases(harness.db, batchId);
  const [adele, alex] = await listMembers(harness.db, batchId);
  await insertSteps(
    harness.db,
    [adele!, alex!].map((member) => ({
      batchId,
      phaseExecutionId: phase!.id,
      batchMemberId: member.id,
      stepName: "only-step",
      stepIndex: 0,
      workerId: "worker-01",
      functionName: "Test-Echo",
    })),
  );
  const [adeleStep, alexStep] = await listStepsByBatch(harness.db, batchId, { limit: 10, offset: 0 });
  for (const step of [adeleStep!, alexStep!]) await transitionStep(harness.db, step.id, "dispatch");
  await transitionStep(harness.db, adeleStep!.id, "fail", { set: { errorCode: "worker.error" } });
  await transitionStep(harness.db, alexStep!.id, "succeed");
  await transitionMember(harness.db, adele!.id, "fail", { reason: "step only-step failed" });
  await transitionPhase(harness.db, phase!.id, "complete");
  await transitionBatch(harness.db, batchId, "complete");
  return {
    batchId,
    phaseId: phase!.id,
    adele: { memberId: adele!.id, step: (await getStep(harness.db, adeleStep!.id))! },
    alex: { memberId: alex!.id, step: (await getStep(harness.db, alexStep!.id))! },
  };
}

const redrive = (id: number | string, body: unknown, token: string | undefined = harness.operatorToken) =>
  harness.request("POST", `/batches/${id}/redrive`, {
    body: typeof body === "string" ? body : JSON.stringify(body),
    type: "application/json",
    token,
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

/** Everything a refused redrive must leave as it was. */
async function snapshot(arranged: Arranged) {
  return {
    events: (await listEvents(harness.db, arranged.batchId, { limit: 1000 })).length,
    outbox: (await outboxIds(`member-redriven:%`)).length,
    batch: (await getBatch(harness.db, arranged.batchId))?.status,
    phase: (await getPhase(harness.db, arranged.phaseId))?.status,
    adele: (await getMember(harness.db, arranged.adele.memberId))?.status,
    step: (await getStep(harness.db, arranged.adele.step.id))?.status,
  };
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

describe("POST /api/batches/{id}/redrive", () => {
  it("redrives the failed members: back to active, their failed step pending with a redrive job id, the ended phase and batch reopened, all recorded with the operator", async () => {
    const arranged = await batchWithFailedMember();
    const response = await redrive(arranged.batchId, { members: "failed" });
    expect(response.status).toBe(202);
    const stepId = arranged.adele.step.id;
    expect(response.body).toEqual({
      batchId: arranged.batchId,
      batchStatus: "active",
      redriven: [
        {
          memberId: arranged.adele.memberId,
          steps: [
            {
              id: stepId,
              phaseExecutionId: arranged.phaseId,
              stepName: "only-step",
              jobId: `step-${stepId}-redrive-1`,
            },
          ],
        },
      ],
    });

    expect(await getMember(harness.db, arranged.adele.memberId)).toMatchObject({
      status: "active",
      failedAt: null,
    });
    expect(await getStep(harness.db, stepId)).toMatchObject({
      status: "pending",
      redriveCount: 1,
      jobId: null,
      errorCode: null,
      completedAt: null,
    });
    // alex's succeeded step is not touched.
    expect(await getStep(harness.db, arranged.alex.step.id)).toMatchObject({
      status: "succeeded",
      redriveCount: 0,
    });
    expect((await getPhase(harness.db, arranged.phaseId))?.status).toBe("dispatched");
    expect((await getBatch(harness.db, arranged.batchId))?.status).toBe("active");

    const events = (await listEvents(harness.db, arranged.batchId, { limit: 1000 })).filter(
      (event) => event.actor !== null && event.reason === "redriven by operator",
    );
    expect(events.map((e) => `${e.entity}:${e.fromStatus}→${e.toStatus}:${e.actor}`)).toEqual([
      `member:failed→active:${OPERATOR}`,
      `step:failed→pending:${OPERATOR}`,
      `phase:completed→dispatched:${OPERATOR}`,
      `batch:completed→active:${OPERATOR}`,
    ]);
    expect(await outboxIds(`member-redriven:${arranged.adele.memberId}:%`)).toEqual([
      `member-redriven:${arranged.adele.memberId}:1`,
    ]);
    expect(await outboxIds(`batch-changed:${arranged.batchId}:redriven:%`)).toHaveLength(1);
  });

  it("takes a list of member ids or a failed step, and gives a second redrive ids of its own", async () => {
    const arranged = await batchWithFailedMember();
    const byStep = await redrive(arranged.batchId, { stepExecutionId: arranged.adele.step.id });
    expect(byStep.status).toBe(202);
    expect(byStep.body.redriven.map((r: Json) => r.memberId)).toEqual([arranged.adele.memberId]);

    // The redriven run fails again; the second redrive names the member.
    const stepId = arranged.adele.step.id;
    await transitionStep(harness.db, stepId, "dispatch");
    await transitionStep(harness.db, stepId, "fail");
    await transitionMember(harness.db, arranged.adele.memberId, "fail");
    const byId = await redrive(arranged.batchId, { memberIds: [arranged.adele.memberId] });
    expect(byId.status).toBe(202);
    expect(byId.body.redriven[0].steps[0].jobId).toBe(`step-${stepId}-redrive-2`);
    expect(await outboxIds(`member-redriven:${arranged.adele.memberId}:%`)).toEqual([
      `member-redriven:${arranged.adele.memberId}:1`,
      `member-redriven:${arranged.adele.memberId}:2`,
    ]);
  });

  it.each([
    ["no form", {}, /give one of members, memberIds, stepExecutionId or initExecutionId/],
    [
      "two forms",
      { members: "failed", stepExecutionId: 3 },
      /give only one of .*not members and stepExecutionId/,
    ],
    ["members other than failed", { members: "all" }, /members.*must be .*failed.*every failed member/],
    ["an empty id list", { memberIds: [] }, /at least one member id/],
    ["too many ids", { memberIds: Array.from({ length: 1001 }, (_, i) => i + 1) }, /at most 1000 member ids/],
    ["an id that is not a positive integer", { memberIds: [1, 0] }, /positive integer/],
    ["a text step id", { stepExecutionId: "7" }, /positive integer/],
    ["an unknown field", { memberId: [1] }, /memberId/],
  ])("400 for %s, naming the problem, with nothing written", async (_case, body, problem) => {
    const arranged = await batchWithFailedMember();
    const before = await snapshot(arranged);
    const response = await redrive(arranged.batchId, body);
    expectProblem(response, 400, "validation.invalid_input", /Send JSON/);
    expect(JSON.stringify(response.body.problems)).toMatch(problem);
    expect(await snapshot(arranged)).toEqual(before);
  });

  it("400 for a body that is not JSON", async () => {
    const arranged = await batchWithFailedMember();
    const response = await harness.request("POST", `/batches/${arranged.batchId}/redrive`, {
      body: "members=failed",
      type: "text/plain",
      token: harness.operatorToken,
    });
    expectProblem(response, 400, "validation.invalid_input", /Send JSON/);
  });

  it("404 for an unknown batch, or a member, step or init that is not the batch's, with nothing written", async () => {
    const arranged = await batchWithFailedMember();
    const other = await batchWithFailedMember();
    const before = await snapshot(arranged);
    expectProblem(
      await redrive(999_999, { members: "failed" }),
      404,
      "resource.not_found",
      /batch 999999 does not exist/,
    );
    expectProblem(
      await redrive(arranged.batchId, { memberIds: [arranged.adele.memberId, other.adele.memberId] }),
      404,
      "resource.not_found",
      new RegExp(`batch ${arranged.batchId} has no member ${other.adele.memberId}$`),
    );
    expectProblem(
      await redrive(arranged.batchId, { stepExecutionId: other.adele.step.id }),
      404,
      "resource.not_found",
      /has no step execution/,
    );
    expectProblem(
      await redrive(arranged.batchId, { initExecutionId: 999_999 }),
      404,
      "resource.not_found",
      /has no init execution 999999/,
    );
    expect(await snapshot(arranged)).toEqual(before);
  });

  it("409 naming every listed member that is not failed; the failed ones are not redriven either", async () => {
    const arranged = await batchWithFailedMember();
    const before = await snapshot(arranged);
    const response = await redrive(arranged.batchId, {
      memberIds: [arranged.adele.memberId, arranged.alex.memberId],
    });
    expectProblem(
      response,
      409,
      "state.conflict",
      new RegExp(
        `only failed members can be redriven: member ${arranged.alex.memberId} is active; nothing was redriven`,
      ),
    );
    expect(response.body.problems).toEqual([
      { path: "memberIds.1", message: `member ${arranged.alex.memberId} is active` },
    ]);
    expect(await snapshot(arranged)).toEqual(before);
  });

  it("409 for a step that did not fail, a batch without failed members, and init steps", async () => {
    const arranged = await batchWithFailedMember();
    expectProblem(
      await redrive(arranged.batchId, { stepExecutionId: arranged.alex.step.id }),
      409,
      "state.conflict",
      /is succeeded; only a failed or poll_timeout step can be redriven/,
    );
    expect((await redrive(arranged.batchId, { members: "failed" })).status).toBe(202);
    expectProblem(
      await redrive(arranged.batchId, { members: "failed" }),
      409,
      "state.conflict",
      /has no failed member to redrive/,
    );

    const withInit = await newBatch("redrivable-init");
    await insertInits(harness.db, [
      {
        batchId: withInit,
        runbookVersion: 1,
        stepName: "create-group",
        stepIndex: 0,
        workerId: "w",
        functionName: "F",
      },
    ]);
    const init = await harness.db
      .selectFrom("initExecutions")
      .select("id")
      .where("batchId", "=", withInit)
      .executeTakeFirstOrThrow();
    await transitionBatch(harness.db, withInit, "fail", { reason: "init step create-group failed" });
    expectProblem(
      await redrive(withInit, { initExecutionId: init.id }),
      409,
      "state.conflict",
      /redriving init steps is not supported/,
    );
  });

  it("409 for a batch whose personal data was purged (retention), with nothing written", async () => {
    const arranged = await batchWithFailedMember();
    expect(await markBatchPurged(harness.db, { batchId: arranged.batchId, mode: "scrub", members: 2 })).toBe(
      true,
    );
    const before = await snapshot(arranged);
    expectProblem(
      await redrive(arranged.batchId, { members: "failed" }),
      409,
      "state.conflict",
      /personal data was purged; a purged batch cannot be redriven/,
    );
    expect(await snapshot(arranged)).toEqual(before);
  });

  it("409 for a cancelled batch and for one whose phases have not started, with nothing written", async () => {
    const arranged = await batchWithFailedMember();
    // Reopen the arranged batch's end so the cancel applies (cancel fires from running states).
    await transitionBatch(harness.db, arranged.batchId, "reopen");
    expect((await harness.request("POST", `/batches/${arranged.batchId}/cancel`)).status).toBe(200);
    const before = await snapshot(arranged);
    expectProblem(
      await redrive(arranged.batchId, { members: "failed" }),
      409,
      "state.conflict",
      /is cancelled; a cancelled batch cannot be redriven/,
    );
    expect(await snapshot(arranged)).toEqual(before);

    // With init steps, a manual batch waits in `detected` for its first advance.
    const detected = await newBatch("redrivable-init");
    expectProblem(
      await redrive(detected, { members: "failed" }),
      409,
      "state.conflict",
      /is detected; its phases have not started/,
    );
  });

  it("lets one of two simultaneous redrives of a member win; the other is refused", async () => {
    const arranged = await batchWithFailedMember();
    const body = { memberIds: [arranged.adele.memberId] };
    const responses = await Promise.all([redrive(arranged.batchId, body), redrive(arranged.batchId, body)]);
    expect(responses.map((r) => r.status).sort()).toEqual([202, 409]);
    expect(await outboxIds(`member-redriven:${arranged.adele.memberId}:%`)).toHaveLength(1);
  });

  it("needs the Operator (or Admin) role", async () => {
    const arranged = await batchWithFailedMember();
    const forbidden = await redrive(arranged.batchId, { members: "failed" }, harness.readerToken);
    expect(forbidden.status).toBe(403);
    expect((await getMember(harness.db, arranged.adele.memberId))?.status).toBe("failed");
    expect((await redrive(arranged.batchId, { members: "failed" }, harness.adminToken)).status).toBe(202);
  });
});
