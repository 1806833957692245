import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  getBatch,
  getBatchWithRunbook,
  insertBatch,
  listBatches,
  setCurrentPhase,
  transitionBatch,
} from "./batches.repository.ts";
import type { Db } from "./connection.ts";
import { listEvents } from "./events.repository.ts";
import { publishRunbook } from "./runbooks.repository.ts";
import { uniqueName } from "../test/test-fixtures.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

async function newRunbook() {
  return publishRunbook(db, {
    name: uniqueName("batches"),
    yamlContent: "phases: []\n",
    overdueBehavior: "rerun",
    rerunInit: false,
  });
}

describe("insertBatch", () => {
  it("creates a detected batch and records its creation on the timeline", async () => {
    const runbook = await newRunbook();
    const start = new Date("2030-02-01T08:00:00Z");
    const batch = await insertBatch(db, {
      runbookId: runbook.id,
      batchStartTime: start,
      isManual: false,
      createdBy: null,
    });
    expect(batch).toMatchObject({
      runbookId: runbook.id,
      status: "detected",
      batchStartTime: start,
      isManual: false,
    });
    expect(batch.detectedAt).toBeInstanceOf(Date);
    const events = await listEvents(db, batch.id, { limit: 10 });
    expect(
      events.map((event) => [event.entity, event.entityId, event.fromStatus, event.toStatus, event.reason]),
    ).toEqual([["batch", batch.id, null, "detected", "created"]]);
  });
});

describe("transitionBatch", () => {
  it("follows the batch machine and records each change", async () => {
    const runbook = await newRunbook();
    const batch = await insertBatch(db, {
      runbookId: runbook.id,
      batchStartTime: null,
      isManual: true,
      createdBy: "admin",
    });
    const dispatched = await transitionBatch(db, batch.id, "dispatch_init");
    expect(dispatched?.status).toBe("init_dispatched");
    expect(dispatched?.initDispatchedAt).toBeInstanceOf(Date);
    expect(await transitionBatch(db, batch.id, "complete")).toBeUndefined();
    expect((await transitionBatch(db, batch.id, "activate", { reason: "init.complete" }))?.status).toBe(
      "active",
    );
    expect(await transitionBatch(db, batch.id, "dispatch_init")).toBeUndefined();
    expect((await transitionBatch(db, batch.id, "complete"))?.status).toBe("completed");
    expect(await transitionBatch(db, batch.id, "fail")).toBeUndefined();

    const events = await listEvents(db, batch.id, { limit: 10 });
    expect(events.map((event) => `${event.fromStatus ?? "-"}>${event.toStatus}`)).toEqual([
      "->detected",
      "detected>init_dispatched",
      "init_dispatched>active",
      "active>completed",
    ]);
    expect(await listEvents(db, batch.id, { afterId: events[1]!.id, limit: 1 })).toEqual([events[2]]);
  });
});

describe("reading batches", () => {
  it("joins the runbook version and filters the listing by runbook name and status, newest first", async () => {
    const runbook = await newRunbook();
    const older = await insertBatch(db, {
      runbookId: runbook.id,
      batchStartTime: null,
      isManual: true,
      createdBy: "a",
    });
    const newer = await insertBatch(db, {
      runbookId: runbook.id,
      batchStartTime: null,
      isManual: true,
      createdBy: "b",
    });
    await transitionBatch(db, older.id, "activate");

    expect(await getBatchWithRunbook(db, newer.id)).toMatchObject({
      id: newer.id,
      runbookName: runbook.name,
      runbookVersion: 1,
      yamlContent: "phases: []\n",
    });
    const all = await listBatches(db, { runbookName: runbook.name, limit: 10, offset: 0 });
    expect(all.map((batch) => batch.id)).toEqual([newer.id, older.id]);
    expect(all[0]).toMatchObject({ runbookName: runbook.name, runbookVersion: 1 });
    const active = await listBatches(db, {
      runbookName: runbook.name,
      status: "active",
      limit: 10,
      offset: 0,
    });
    expect(active.map((batch) => batch.id)).toEqual([older.id]);
    const secondPage = await listBatches(db, { runbookName: runbook.name, limit: 1, offset: 1 });
    expect(secondPage.map((batch) => batch.id)).toEqual([older.id]);
  });

  it("records the phase a manual batch was advanced to", async () => {
    const runbook = await newRunbook();
    const batch = await insertBatch(db, {
      runbookId: runbook.id,
      batchStartTime: null,
      isManual: true,
      createdBy: "a",
    });
    await setCurrentPhase(db, batch.id, "cutover");
    expect((await getBatch(db, batch.id))?.currentPhase).toBe("cutover");
  });
});
