import {
  insertSteps,
  listEvents,
  listMembers,
  listPhases,
  listStepsByBatch,
  transitionBatch,
  transitionStep,
} from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

/**
 * POST /api/batches/{id}/pause and …/resume (issue 12). The harness runs no orchestrator, so a
 * batch "mid-phase" is arranged with the repositories and the assertions read what the commands
 * wrote (status, events with their actor, outbox); the orchestrator's side is in its scenarios.
 */
let harness: ApiHarness;
const members = "UserPrincipalName\nadele@contoso.test\nalex@contoso.test\n";

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({ name: "pausable", phases: ["first", "second"] });
  // With init steps, a new batch waits in `detected` until advanced.
  const withInit = testRunbookYaml({ name: "pausable-init", initWorkerId: "worker-01" });
  for (const body of [yaml, withInit]) {
    expect((await harness.request("POST", "/runbooks", { body, type: "application/yaml" })).status).toBe(201);
  }
});

afterAll(async () => {
  await harness?.stop();
});

/** A new batch: active at once (no init steps), or `detected` for the runbook with init steps. */
async function newBatch(runbook = "pausable"): Promise<number> {
  const response = await harness.request("POST", `/batches?runbook=${runbook}`, {
    body: members,
    type: "text/csv",
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

/** First phase advanced; adele's step dispatched, alex's polling. */
async function batchMidPhase(): Promise<number> {
  const id = await newBatch();
  expect((await harness.request("POST", `/batches/${id}/advance`)).status).toBe(202);
  const [phase] = await listPhases(harness.db, id);
  const [adele, alex] = await listMembers(harness.db, id);
  await insertSteps(
    harness.db,
    [adele!, alex!].map((member) => ({
      batchId: id,
      phaseExecutionId: phase!.id,
      batchMemberId: member.id,
      stepName: "first-step",
      stepIndex: 0,
      workerId: "worker-01",
      functionName: "Test-Echo",
      isPollStep: true,
      pollIntervalSec: 60,
      pollTimeoutSec: 3600,
    })),
  );
  const [adeleStep, alexStep] = await listStepsByBatch(harness.db, id, { limit: 10, offset: 0 });
  await transitionStep(harness.db, adeleStep!.id, "dispatch", { set: { jobId: `step-${adeleStep!.id}` } });
  await transitionStep(harness.db, alexStep!.id, "dispatch", { set: { jobId: `step-${alexStep!.id}` } });
  await transitionStep(harness.db, alexStep!.id, "start_polling", {
    set: { pollStartedAt: new Date(), lastPolledAt: new Date() },
  });
  return id;
}

const post = (id: number | string, action: "pause" | "resume", token?: string | null) =>
  harness.request("POST", `/batches/${id}/${action}`, token === undefined ? {} : { token });

async function outboxIds(pattern: string): Promise<string[]> {
  const rows = await harness.db
    .selectFrom("outbox")
    .select("messageId")
    .where("messageId", "like", pattern)
    .orderBy("id")
    .execute();
  return rows.map((row) => row.messageId);
}

async function eventCount(id: number): Promise<number> {
  return (await listEvents(harness.db, id, { limit: 1000 })).length;
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

describe("POST /api/batches/{id}/pause and /resume", () => {
  it("pauses an active batch and resumes it, recording the operator on both events", async () => {
    const id = await batchMidPhase();
    const paused = await post(id, "pause", harness.operatorToken);
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ batchId: id, status: "paused" });
    expect((await harness.request("GET", `/batches/${id}`)).body.status).toBe("paused");
    // The workflow is told at once, to suspend.
    expect(await outboxIds(`batch-changed:${id}:paused:%`)).toHaveLength(1);

    const resumed = await post(id, "resume", harness.operatorToken);
    expect(resumed.status).toBe(200);
    // The dispatched phase is restarted, alex's poll goes on; nothing was waiting on a retry.
    expect(resumed.body).toEqual({
      batchId: id,
      status: "active",
      resent: { phases: 1, pollChecks: 1, retryChecks: 0 },
    });
    const [phase] = await listPhases(harness.db, id);
    const [, alexStep] = await listStepsByBatch(harness.db, id, { limit: 10, offset: 0 });
    expect(await outboxIds(`phase-due:${phase!.id}:%`)).toEqual([`phase-due:${phase!.id}:resume-1`]);
    expect(await outboxIds(`poll-check:step:${alexStep!.id}:%`)).toEqual([
      `poll-check:step:${alexStep!.id}:1:resume-1`,
    ]);
    expect(await outboxIds(`batch-changed:${id}:resumed:%`)).toHaveLength(1);

    const events = (await listEvents(harness.db, id, { limit: 1000 })).filter(
      (event) => event.entity === "batch",
    );
    expect(events.slice(-2).map((event) => [event.fromStatus, event.toStatus, event.actor])).toEqual([
      ["active", "paused", "operator@example.test"],
      ["paused", "active", "operator@example.test"],
    ]);
  });

  it("gives every resume messages of its own, so a second pause and resume is not deduplicated away", async () => {
    const id = await batchMidPhase();
    for (const action of ["pause", "resume", "pause", "resume"] as const) {
      expect((await post(id, action)).status).toBe(200);
    }
    const [phase] = await listPhases(harness.db, id);
    expect(await outboxIds(`phase-due:${phase!.id}:%`)).toEqual([
      `phase-due:${phase!.id}:resume-1`,
      `phase-due:${phase!.id}:resume-2`,
    ]);
  });

  it("answers 409 naming the status, writing nothing, to pausing a batch that is not active", async () => {
    const detected = await newBatch("pausable-init");
    const before = await eventCount(detected);
    expectProblem(await post(detected, "pause"), 409, "state.conflict", /is detected; only an active batch/);
    expect(await eventCount(detected)).toBe(before);
    expect(await outboxIds(`batch-changed:${detected}:%`)).toEqual([]);

    const id = await batchMidPhase();
    expect((await post(id, "pause")).status).toBe(200);
    const afterPause = await eventCount(id);
    expectProblem(await post(id, "pause"), 409, "state.conflict", /is paused/);
    expect(await eventCount(id)).toBe(afterPause);

    const failed = await newBatch("pausable-init");
    await transitionBatch(harness.db, failed, "fail", { reason: "test" });
    expectProblem(await post(failed, "pause"), 409, "state.conflict", /is failed/);
  });

  it("answers 409 naming the status, writing nothing, to resuming a batch that is not paused", async () => {
    const id = await batchMidPhase();
    const before = await eventCount(id);
    const nudges = (await outboxIds(`batch-changed:${id}:%`)).length;
    expectProblem(await post(id, "resume"), 409, "state.conflict", /is active; only a paused batch/);
    expect(await eventCount(id)).toBe(before);
    expect(await outboxIds(`batch-changed:${id}:%`)).toHaveLength(nudges);
    const [phase] = await listPhases(harness.db, id);
    expect(await outboxIds(`phase-due:${phase!.id}:%`)).toEqual([]);

    const cancelled = await batchMidPhase();
    expect((await post(cancelled, "pause")).status).toBe(200);
    expect((await harness.request("POST", `/batches/${cancelled}/cancel`)).status).toBe(200);
    expectProblem(await post(cancelled, "resume"), 409, "state.conflict", /is cancelled/);
  });

  it("answers 404 for an unknown batch and 400 for an id that is not one", async () => {
    expectProblem(await post(999999, "pause"), 404, "resource.not_found", /batch 999999 does not exist/);
    expectProblem(await post(999999, "resume"), 404, "resource.not_found", /batch 999999 does not exist/);
    expect((await post("abc", "pause")).status).toBe(400);
  });

  it("lets Operators and Admins pause and resume, not Readers or anonymous callers", async () => {
    const id = await batchMidPhase();
    expect((await post(id, "pause", harness.readerToken)).status).toBe(403);
    expect((await post(id, "pause", null)).status).toBe(401);
    expect((await harness.request("GET", `/batches/${id}`)).body.status).toBe("active");
    expect((await post(id, "pause", harness.adminToken)).status).toBe(200);
    expect((await post(id, "resume", harness.readerToken)).status).toBe(403);
    expect((await post(id, "resume", harness.adminToken)).status).toBe(200);
    const events = (await listEvents(harness.db, id, { limit: 1000 })).filter(
      (event) => event.entity === "batch",
    );
    expect(events.slice(-2).map((event) => event.actor)).toEqual([
      "admin@example.test",
      "admin@example.test",
    ]);
  });

  it("are described in the OpenAPI document, for Operators and Admins", async () => {
    const document = (await harness.request("GET", "/openapi.json", { token: null })).body;
    for (const action of ["pause", "resume"]) {
      const operation = document.paths[`/api/batches/{id}/${action}`].post;
      expect(operation["x-required-roles"]).toEqual(["Operator", "Admin"]);
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["200", "404", "409"]));
    }
  });
});
