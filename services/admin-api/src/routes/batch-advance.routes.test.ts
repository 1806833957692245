import {
  insertBatch,
  insertPhases,
  listPhases,
  transitionBatch,
  transitionPhase,
  type OutboxRow,
} from "@matoolkit/db";
import { topics } from "@matoolkit/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

/**
 * POST /api/batches/{id}/advance (000 "Manual Batch Lifecycle" step 2). The harness runs no
 * outbox relay, so what advance sends stays in the outbox table for the assertions.
 */
let harness: ApiHarness;
const members = "UserPrincipalName\nadele@contoso.test\nalex@contoso.test\n";

beforeAll(async () => {
  harness = await startApiHarness();
  for (const yaml of [
    testRunbookYaml({ name: "plain", phases: ["first", "second", "third"] }),
    testRunbookYaml({ name: "initial", initWorkerId: "worker-01", phases: ["only"] }),
  ]) {
    expect(
      (await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status,
    ).toBe(201);
  }
});

afterAll(async () => {
  await harness?.stop();
});

async function newBatch(runbook: string): Promise<number> {
  const response = await harness.request("POST", `/batches?runbook=${runbook}`, {
    body: members,
    type: "text/csv",
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

const advance = (id: number | string) => harness.request("POST", `/batches/${id}/advance`);

/** The spec messages advance sent for the batch (batch-init, phase-due), in order. */
async function outboxOf(batchId: number): Promise<OutboxRow[]> {
  return (await allOutboxOf(batchId)).filter((row) => row.properties.MessageType !== "batch-changed");
}

async function allOutboxOf(batchId: number): Promise<OutboxRow[]> {
  const rows = await harness.db.selectFrom("outbox").selectAll().orderBy("id").execute();
  return rows.filter((row) => (row.body as { BatchId?: number }).BatchId === batchId);
}

async function batchStatus(id: number): Promise<string> {
  const batch = await harness.db
    .selectFrom("batches")
    .select("status")
    .where("id", "=", id)
    .executeTakeFirst();
  return batch!.status;
}

function expectConflict(response: { status: number; body: Json }, message: RegExp) {
  expect(response.status).toBe(409);
  expect(response.body.code).toBe("state.conflict");
  expect(response.body.detail).toMatch(message);
}

describe("advancing a batch whose runbook has init", () => {
  it("dispatches init first: batch init_dispatched and a batch-init message in the outbox", async () => {
    const id = await newBatch("initial");
    const response = await advance(id);
    expect(response.status).toBe(202);
    expect(response.body).toEqual({ action: "init", batchId: id });
    expect(await batchStatus(id)).toBe("init_dispatched");
    const [message, ...others] = await outboxOf(id);
    expect(others).toEqual([]);
    expect(message).toMatchObject({
      messageId: `batch-init:${id}:1`,
      topic: topics.orchestratorEvents,
      properties: { MessageType: "batch-init" },
      body: { BatchId: id, RunbookName: "initial", RunbookVersion: 1 },
    });
    // No phase moves until init is done.
    expect((await listPhases(harness.db, id)).map((p) => p.status)).toEqual(["pending"]);
  });

  it("refuses while init runs, sending nothing more", async () => {
    const id = await newBatch("initial");
    await advance(id);
    expectConflict(await advance(id), /init steps/);
    expect(await outboxOf(id)).toHaveLength(1);
  });
});

describe("advancing an active batch", () => {
  it("dispatches the phases in runbook order, one per call, then 409 'no pending phase'", async () => {
    const id = await newBatch("plain");
    const phases = await listPhases(harness.db, id);
    for (const [index, phase] of phases.entries()) {
      // The orchestrator is not running here: finish the previous phase as it would.
      const previous = phases[index - 1];
      if (previous !== undefined) await transitionPhase(harness.db, previous.id, "complete");
      const response = await advance(id);
      expect(response.status).toBe(202);
      expect(response.body).toEqual({
        action: "phase",
        batchId: id,
        phaseName: phase.phaseName,
        phaseExecutionId: phase.id,
        sequence: index,
        phaseStatus: "dispatched",
      });
      const batch = await harness.request("GET", `/batches/${id}`);
      expect(batch.body.currentPhase).toBe(phase.phaseName);
    }
    await transitionPhase(harness.db, phases[2]!.id, "complete");
    expectConflict(await advance(id), /no pending phase/);
    expect((await listPhases(harness.db, id)).map((p) => p.status)).toEqual([
      "completed",
      "completed",
      "completed",
    ]);
    const sent = await outboxOf(id);
    expect(sent.map((row) => row.messageId)).toEqual(phases.map((phase) => `phase-due:${phase.id}`));
    expect(sent[0]).toMatchObject({
      topic: topics.orchestratorEvents,
      properties: { MessageType: "phase-due" },
      body: {
        BatchId: id,
        RunbookName: "plain",
        RunbookVersion: 1,
        PhaseName: "first",
        PhaseExecutionId: phases[0]!.id,
      },
    });
  });

  it("nudges the batch workflow with a batch-changed message after each successful advance", async () => {
    const id = await newBatch("plain");
    expect((await advance(id)).status).toBe(202);
    expectConflict(await advance(id), /still running/);
    const nudges = (await allOutboxOf(id)).filter((row) => row.properties.MessageType === "batch-changed");
    expect(nudges.map((row) => row.body)).toEqual([{ BatchId: id }]);
  });

  it("refuses to start the next phase while the previous one is still running", async () => {
    const id = await newBatch("plain");
    expect((await advance(id)).status).toBe(202);
    expectConflict(await advance(id), /phase first of batch \d+ is still running/);
    expect((await listPhases(harness.db, id)).map((p) => p.status)).toEqual([
      "dispatched",
      "pending",
      "pending",
    ]);
    expect(await outboxOf(id)).toHaveLength(1);
  });

  it("never dispatches one phase twice when operators advance at the same moment", async () => {
    for (let round = 0; round < 5; round++) {
      const id = await newBatch("plain");
      const responses = await Promise.all([advance(id), advance(id), advance(id)]);
      const dispatched = responses.filter((r) => r.status === 202).map((r) => r.body.phaseName);
      const refused = responses.filter((r) => r.status !== 202);
      expect(dispatched).toEqual(["first"]);
      for (const response of refused) expectConflict(response, /changed while advancing|still running/);
      // The phases dispatched are the first ones in order, each sent exactly once.
      const phases = await listPhases(harness.db, id);
      const dispatchedNames = phases.filter((p) => p.status === "dispatched").map((p) => p.phaseName);
      expect(dispatchedNames).toEqual(["first", "second", "third"].slice(0, dispatched.length));
      expect([...dispatched].sort()).toEqual([...dispatchedNames].sort());
      const sent = (await outboxOf(id)).map((row) => row.messageId);
      expect(new Set(sent).size).toBe(sent.length);
      expect(sent).toHaveLength(dispatched.length);
      const events = await harness.db
        .selectFrom("events")
        .select("entityId")
        .where("batchId", "=", id)
        .where("entity", "=", "phase")
        .where("toStatus", "=", "dispatched")
        .execute();
      expect(events).toHaveLength(dispatched.length);
    }
  });
});

describe("advancing a batch that cannot move", () => {
  it.each([
    ["completed", ["complete"]],
    ["failed", ["fail"]],
  ] as const)("refuses a %s batch", async (status, events) => {
    const id = await newBatch("plain");
    for (const event of events) await transitionBatch(harness.db, id, event);
    expect(await batchStatus(id)).toBe(status);
    expectConflict(await advance(id), new RegExp(`is ${status}; nothing left`));
    expect(await outboxOf(id)).toEqual([]);
  });

  it("refuses an automated batch: its phases run on schedule", async () => {
    const runbook = await harness.request("GET", "/runbooks/plain");
    const automated = await insertBatch(harness.db, {
      runbookId: runbook.body.id,
      batchStartTime: new Date("2030-01-01T00:00:00Z"),
      isManual: false,
      createdBy: null,
    });
    await transitionBatch(harness.db, automated.id, "activate");
    await insertPhases(harness.db, automated.id, [
      { phaseName: "first", sequence: 0, offsetMinutes: 0, dueAt: null, runbookVersion: 1 },
    ]);
    expectConflict(await advance(automated.id), /automated/);
    expect((await listPhases(harness.db, automated.id)).map((p) => p.status)).toEqual(["pending"]);
    expect(await outboxOf(automated.id)).toEqual([]);
  });

  it("answers an unknown batch with 404 and a non-numeric id with 400", async () => {
    const unknown = await advance(999_999);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("resource.not_found");
    const bad = await advance("first");
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain("'id'");
  });

  it("needs the Admin role", async () => {
    const id = await newBatch("plain");
    const response = await harness.request("POST", `/batches/${id}/advance`, { token: harness.readerToken });
    expect(response.status).toBe(403);
    expect(await outboxOf(id)).toEqual([]);
  });
});
