import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "./connection.ts";
import { appendEvent, listEvents, MAX_EVENT_REASON_LENGTH } from "./events.repository.ts";
import { listRollbacks, recordRollbackStep, type RollbackStepRecord } from "./rollback-events.ts";
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

const record = (batchId: number, overrides: Partial<RollbackStepRecord>): RollbackStepRecord => ({
  batchId,
  entity: "step",
  executionId: 41,
  executionStatus: "failed",
  sequence: "alert-admins",
  index: 0,
  total: 2,
  stepName: "alert",
  outcome: { sent: true, jobId: "rollback-step-41-0-0" },
  ...overrides,
});

describe("rollback events", () => {
  it("annotate the failed execution (from = to) and read back as its rollback, per execution", async () => {
    const { batch } = await seedBatch(db, 1);
    await recordRollbackStep(db, record(batch.id, {}));
    await recordRollbackStep(
      db,
      record(batch.id, {
        index: 1,
        stepName: "open-ticket",
        outcome: { sent: false, reason: "template.unresolved" },
      }),
    );
    await recordRollbackStep(
      db,
      record(batch.id, {
        entity: "init",
        executionId: 41,
        executionStatus: "poll_timeout",
        sequence: "undo-group",
        total: 1,
        stepName: "remove-group",
        outcome: { sent: true, jobId: "rollback-init-41-0-0" },
      }),
    );
    await recordRollbackStep(db, record(batch.id, { executionId: 99 }));

    const events = await listEvents(db, batch.id, { limit: 100 });
    expect(events.filter((e) => e.entity === "step" && e.entityId === 41)).toMatchObject([
      {
        fromStatus: "failed",
        toStatus: "failed",
        reason: "rollback alert-admins: step 1/2 alert sent (job rollback-step-41-0-0)",
      },
      {
        fromStatus: "failed",
        toStatus: "failed",
        reason: "rollback alert-admins: step 2/2 open-ticket not sent (template.unresolved)",
      },
    ]);

    const rollbacks = await listRollbacks(db, batch.id, { stepIds: [41, 42], initIds: [41] });
    expect([...rollbacks.keys()].sort()).toEqual(["init:41", "step:41"]);
    expect(rollbacks.get("step:41")).toEqual({
      name: "alert-admins",
      dispatchedAt: events.find((e) => e.entity === "step" && e.entityId === 41)!.at,
      steps: [
        {
          position: 1,
          stepName: "alert",
          jobId: "rollback-step-41-0-0",
          sent: true,
          reason: null,
          at: expect.any(Date),
        },
        {
          position: 2,
          stepName: "open-ticket",
          jobId: null,
          sent: false,
          reason: "template.unresolved",
          at: expect.any(Date),
        },
      ],
    });
    expect(rollbacks.get("init:41")).toMatchObject({
      name: "undo-group",
      steps: [{ stepName: "remove-group", jobId: "rollback-init-41-0-0", sent: true }],
    });
    expect(await listRollbacks(db, batch.id, { stepIds: [], initIds: [] })).toEqual(new Map());
  });

  it("has no dispatch time when no step of the sequence could be sent", async () => {
    const { batch } = await seedBatch(db, 1);
    await recordRollbackStep(
      db,
      record(batch.id, { total: 1, outcome: { sent: false, reason: "template.unresolved" } }),
    );
    const rollback = (await listRollbacks(db, batch.id, { stepIds: [41], initIds: [] })).get("step:41");
    expect(rollback).toMatchObject({ dispatchedAt: null, steps: [{ sent: false }] });
  });

  it("keeps the job id readable when the runbook's names are very long", async () => {
    const { batch } = await seedBatch(db, 1);
    const long = "x".repeat(500);
    await recordRollbackStep(db, record(batch.id, { sequence: long, stepName: long }));
    const [event] = await listEvents(db, batch.id, { afterId: 0, limit: 100 }).then((all) =>
      all.filter((e) => e.entity === "step"),
    );
    expect(event!.reason!.length).toBeLessThanOrEqual(MAX_EVENT_REASON_LENGTH);
    const rollback = (await listRollbacks(db, batch.id, { stepIds: [41], initIds: [] })).get("step:41");
    expect(rollback?.steps[0]).toMatchObject({ jobId: "rollback-step-41-0-0", sent: true });
    expect(rollback?.name).toBe("x".repeat(60));
  });

  it("ignores status changes and other annotations", async () => {
    const { batch } = await seedBatch(db, 1);
    await appendEvent(db, {
      batchId: batch.id,
      entity: "step",
      entityId: 41,
      fromStatus: "dispatched",
      toStatus: "failed",
      reason: "rollback lookalike: step 1/1 x sent (job j)",
    });
    await appendEvent(db, {
      batchId: batch.id,
      entity: "step",
      entityId: 41,
      fromStatus: "failed",
      toStatus: "failed",
      reason: "note",
    });
    expect(await listRollbacks(db, batch.id, { stepIds: [41], initIds: [] })).toEqual(new Map());
  });
});

describe("appendEvent", () => {
  it("stores a short reason, cut to the column's limit", async () => {
    const { batch } = await seedBatch(db, 1);
    const event = await appendEvent(db, {
      batchId: batch.id,
      entity: "batch",
      entityId: batch.id,
      fromStatus: "detected",
      toStatus: "detected",
      reason: "r".repeat(300),
    });
    expect(event.reason).toHaveLength(MAX_EVENT_REASON_LENGTH);
    expect(event.id).toBeGreaterThan(0);
  });
});
