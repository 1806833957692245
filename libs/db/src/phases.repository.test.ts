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
