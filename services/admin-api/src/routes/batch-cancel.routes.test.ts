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
 * POST /api/batches/{id}/cancel. The harness runs no orchestrator, so a batch "mid-phase" is
 * arranged with the repositories; the orchestrator side (late results) is in its scenarios.
 */
let harness: ApiHarness;
const members = "UserPrincipalName\nadele@contoso.test\nalex@contoso.test\n";

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({ name: "cancellable", phases: ["first", "second"] });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});

afterAll(async () => {
  await harness?.stop();
});

async function newBatch(): Promise<number> {
  const response = await harness.request("POST", "/batches?runbook=cancellable", {
    body: members,
    type: "text/csv",
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

/** First phase advanced; adele's step dispatched, alex's already succeeded. */
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
    })),
  );
  const [adeleStep, alexStep] = await listStepsByBatch(harness.db, id, { limit: 10, offset: 0 });
  await transitionStep(harness.db, adeleStep!.id, "dispatch");
  await transitionStep(harness.db, alexStep!.id, "dispatch");
  await transitionStep(harness.db, alexStep!.id, "succeed");
  return id;
}

const cancel = (id: number | string, token?: string) =>
  harness.request("POST", `/batches/${id}/cancel`, token === undefined ? {} : { token });

function expectConflict(response: { status: number; body: Json }, message: RegExp) {
  expect(response.status).toBe(409);
  expect(response.body.code).toBe("state.conflict");
  expect(response.body.detail).toMatch(message);
}

describe("POST /api/batches/{id}/cancel", () => {
  it("cancels the batch, its open phases and steps in one go, and records why", async () => {
    const id = await batchMidPhase();
    const response = await cancel(id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      batchId: id,
      status: "cancelled",
      cancelled: { phases: 2, steps: 1, inits: 0 },
    });

    const detail = await harness.request("GET", `/batches/${id}`);
    expect(detail.body.status).toBe("cancelled");
    expect(detail.body.phases.map((p: Json) => p.status)).toEqual(["cancelled", "cancelled"]);
    // alex's finished step keeps its result; adele's in-flight one is cancelled.
    const steps = await harness.request("GET", `/batches/${id}/steps`);
    expect(steps.body.steps.map((s: Json) => s.status)).toEqual(["cancelled", "succeeded"]);

    const cancelEvents = (await listEvents(harness.db, id, { limit: 100 })).filter(
      (event) => event.reason === "batch.cancelled",
    );
    expect(cancelEvents.map((e) => `${e.entity}:${e.fromStatus}→${e.toStatus}`)).toEqual([
      "batch:active→cancelled",
      "phase:dispatched→cancelled",
      "phase:pending→cancelled",
      "step:dispatched→cancelled",
    ]);
    // The batch's workflow is told at once rather than at its next re-check.
    const nudges = await harness.db
      .selectFrom("outbox")
      .select("messageId")
      .where("messageId", "like", `batch-changed:${id}:cancelled:%`)
      .execute();
    expect(nudges).toHaveLength(1);
  });

  it("answers 409 to a second cancel and to a batch that has ended, changing nothing", async () => {
    const id = await batchMidPhase();
    expect((await cancel(id)).status).toBe(200);
    const eventCount = (await listEvents(harness.db, id, { limit: 1000 })).length;
    expectConflict(await cancel(id), /is cancelled/);
    expect(await listEvents(harness.db, id, { limit: 1000 })).toHaveLength(eventCount);

    const failed = await newBatch();
    await transitionBatch(harness.db, failed, "fail", { reason: "test" });
    expectConflict(await cancel(failed), /is failed/);
  });

  it("cancels a batch before any of its phases has run", async () => {
    const id = await newBatch();
    const response = await cancel(id);
    expect(response.body).toMatchObject({ status: "cancelled", cancelled: { phases: 2, steps: 0 } });
  });

  it("lets exactly one of two simultaneous cancels win", async () => {
    const id = await batchMidPhase();
    const responses = await Promise.all([cancel(id), cancel(id)]);
    expect(responses.map((r) => r.status).sort()).toEqual([200, 409]);
  });

  it("needs the Admin role, an existing batch and a valid id", async () => {
    const id = await newBatch();
    const forbidden = await cancel(id, harness.readerToken);
    expect(forbidden.status).toBe(403);
    expect((await harness.request("GET", `/batches/${id}`)).body.status).toBe("active");
    expect((await cancel(999_999)).status).toBe(404);
    const invalid = await cancel("abc");
    expect(invalid.status).toBe(400);
    expect(invalid.body.detail).toContain("'id'");
  });
});
