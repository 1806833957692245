import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "./connection.ts";
import { listEvents } from "./events.repository.ts";
import { getPhase, insertPhases, listPhases, transitionPhase } from "./phases.repository.ts";
import { seedBatch } from "../test/test-fixtures.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

describe("phases", () => {
  it("lists phases in runbook order and skips a phase already created for the version", async () => {
    const { batch, phase: existing } = await seedBatch(db, 0);
    const dueAt = new Date("2030-01-02T00:00:00Z");
    const inserted = await insertPhases(db, batch.id, [
      { phaseName: "cutover", sequence: 2, offsetMinutes: 1440, dueAt, runbookVersion: 1 },
      { phaseName: "prepare", sequence: 1, offsetMinutes: 60, dueAt: null, runbookVersion: 1 },
      { phaseName: "migrate", sequence: 0, offsetMinutes: 0, dueAt: null, runbookVersion: 1 },
    ]);
    expect(inserted.map((phase) => phase.phaseName)).toEqual(["cutover", "prepare"]);
    const phases = await listPhases(db, batch.id);
    expect(phases.map((phase) => [phase.phaseName, phase.status])).toEqual([
      ["migrate", "pending"],
      ["prepare", "pending"],
      ["cutover", "pending"],
    ]);
    expect(phases[0]?.id).toBe(existing.id);
    expect(phases[2]?.dueAt).toEqual(dueAt);
  });

  it("dispatches and completes a phase once, stamping both times", async () => {
    const { batch, phase } = await seedBatch(db, 0);
    expect(await transitionPhase(db, phase.id, "complete")).toBeUndefined();
    expect((await transitionPhase(db, phase.id, "dispatch"))?.dispatchedAt).toBeInstanceOf(Date);
    expect(await transitionPhase(db, phase.id, "supersede")).toBeUndefined();
    const completed = await transitionPhase(db, phase.id, "complete", { reason: "members.succeeded" });
    expect(completed).toMatchObject({ status: "completed" });
    expect(completed?.completedAt).toBeInstanceOf(Date);
    expect(await transitionPhase(db, phase.id, "fail")).toBeUndefined();
    expect((await getPhase(db, phase.id))?.status).toBe("completed");
    const events = (await listEvents(db, batch.id, { limit: 10 })).filter(
      (event) => event.entity === "phase",
    );
    expect(events.map((event) => event.toStatus)).toEqual(["dispatched", "completed"]);
  });
});

describe("phases with an approval gate (issue 30)", () => {
  async function gated(approval: { timeoutSeconds?: number; timeoutOutcome: "approve" | "reject" }) {
    const { batch } = await seedBatch(db, 0);
    const [phase] = await insertPhases(db, batch.id, [
      { phaseName: "cutover", sequence: 1, offsetMinutes: 0, dueAt: null, runbookVersion: 1, approval },
    ]);
    return phase!;
  }

  it("copies the gate onto the row; a timeout's outcome only when there is a timeout", async () => {
    const timed = await gated({ timeoutSeconds: 3600, timeoutOutcome: "approve" });
    expect([timed.approvalRequired, timed.approvalTimeoutSeconds, timed.approvalTimeoutOutcome]).toEqual([
      true,
      3600,
      "approve",
    ]);
    const open = await gated({ timeoutOutcome: "reject" });
    expect([open.approvalRequired, open.approvalTimeoutSeconds, open.approvalTimeoutOutcome]).toEqual([
      true,
      null,
      null,
    ]);
    const { phase: ungated } = await seedBatch(db, 0);
    expect(ungated.approvalRequired).toBe(false);
  });

  it("stamps when the timeout applies as the phase starts waiting, and nothing without a timeout", async () => {
    const timed = await gated({ timeoutSeconds: 3600, timeoutOutcome: "reject" });
    const before = Date.now();
    const waiting = await transitionPhase(db, timed.id, "await_approval", { reason: "due" });
    expect(waiting?.status).toBe("awaiting_approval");
    const expiresIn = waiting!.approvalExpiresAt!.getTime() - before;
    expect(expiresIn).toBeGreaterThan(3_590_000);
    expect(expiresIn).toBeLessThan(3_610_000);
    const open = await transitionPhase(db, (await gated({ timeoutOutcome: "reject" })).id, "await_approval");
    expect(open?.approvalExpiresAt).toBeNull();
  });

  it("approves once into dispatched, or rejects once into failed with no member counted, recording the operator", async () => {
    const approved = await gated({ timeoutOutcome: "reject" });
    await transitionPhase(db, approved.id, "await_approval");
    const sent = await transitionPhase(db, approved.id, "approve", {
      actor: "op@contoso.test",
      reason: "go",
    });
    expect([sent?.status, sent?.approvalDecision, sent?.dispatchedAt !== null]).toEqual([
      "dispatched",
      "approved",
      true,
    ]);
    expect(await transitionPhase(db, approved.id, "reject")).toBeUndefined();

    const rejected = await gated({ timeoutOutcome: "reject" });
    await transitionPhase(db, rejected.id, "await_approval");
    const ended = await transitionPhase(db, rejected.id, "reject", {
      actor: "op@contoso.test",
      reason: "phase.rejected: no-go",
    });
    expect(ended).toMatchObject({
      status: "failed",
      approvalDecision: "rejected",
      outcome: "failed",
      succeededMembers: 0,
      failedMembers: 0,
      dispatchedAt: null,
    });
    expect(await transitionPhase(db, rejected.id, "approve")).toBeUndefined();
    const events = (await listEvents(db, ended!.batchId, { limit: 100 })).filter(
      (event) => event.entityId === rejected.id,
    );
    expect(events.map((event) => [event.fromStatus, event.toStatus, event.actor])).toEqual([
      ["pending", "awaiting_approval", null],
      ["awaiting_approval", "failed", "op@contoso.test"],
    ]);
  });

  it("never gates an ungated phase", async () => {
    const { phase } = await seedBatch(db, 0);
    await expect(transitionPhase(db, phase.id, "await_approval")).rejects.toThrow(
      /phase_executions_approval_check/,
    );
  });
});
