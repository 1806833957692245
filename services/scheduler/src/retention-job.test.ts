import { purgeEndedBatches } from "@matoolkit/commands";
import {
  insertBatch,
  insertMembers,
  insertPhases,
  insertSteps,
  publishRunbook,
  scrubMembersChunk,
  transitionBatch,
  type Db,
} from "@matoolkit/db";
import { createEmbeddedRuntime, createLogger } from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runRetentionPurge } from "./retention-job.ts";
import { startSchedulerService } from "./scheduler-service.ts";

/**
 * The retention purge (issue 31 item 2) on a real database: the run the daily job makes, its dry
 * run, chunks, a re-run and a run after a crash, delete mode, and the job on its timer.
 */
let database: TestDatabase;
let db: Db;
let runbookId: number;

const DAY = 24 * 60 * 60 * 1000;
/** 91 days from now: every batch ended in this test is due under a 90-day retention. */
const later = () => new Date(Date.now() + 91 * DAY);
const scrub = { days: 90, mode: "scrub" as const };
const silent = createLogger({ level: "silent", name: "retention-test" });

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
  runbookId = (
    await publishRunbook(db, {
      name: "retention",
      yamlContent: "name: retention\n",
      overdueBehavior: "rerun",
      rerunInit: false,
    })
  ).id;
});
afterAll(async () => {
  await database.drop();
});

async function endedBatch(
  members: number,
  end: "complete" | "cancel" | "none" = "complete",
): Promise<number> {
  const batch = await insertBatch(db, {
    runbookId,
    batchStartTime: null,
    isManual: true,
    createdBy: "alice",
  });
  const rows = await insertMembers(
    db,
    batch.id,
    Array.from({ length: members }, (_, index) => ({
      memberKey: `user${index}@contoso.test`,
      data: { Name: `User ${index}` },
    })),
  );
  const [phase] = await insertPhases(db, batch.id, [
    { phaseName: "move", sequence: 0, offsetMinutes: 0, dueAt: null, runbookVersion: 1 },
  ]);
  await insertSteps(
    db,
    rows.map((member) => ({
      batchId: batch.id,
      phaseExecutionId: phase!.id,
      batchMemberId: member.id,
      stepName: "move",
      stepIndex: 0,
      workerId: "w",
      functionName: "Move-Mailbox",
      paramsJson: { Identity: member.memberKey },
      resultJson: { ok: true },
    })),
  );
  if (end === "none") return batch.id;
  if (end === "complete") await transitionBatch(db, batch.id, "activate");
  await transitionBatch(db, batch.id, end);
  return batch.id;
}

async function state(batchId: number) {
  const batch = await db
    .selectFrom("batches")
    .select(["status", "purgedAt", "purgeMode"])
    .where("id", "=", batchId)
    .executeTakeFirstOrThrow();
  const members = await db
    .selectFrom("batchMembers")
    .select(["memberKey", "status", "dataJson"])
    .where("batchId", "=", batchId)
    .orderBy("id")
    .execute();
  const steps = await db
    .selectFrom("stepExecutions")
    .select(["status", "paramsJson", "resultJson"])
    .where("batchId", "=", batchId)
    .execute();
  return { batch, members, steps };
}

describe("purgeEndedBatches", () => {
  it("dry run: lists the due batches with their member counts and changes nothing", async () => {
    const due = await endedBatch(3);
    const running = await endedBatch(1, "none");
    const before = await state(due);
    const report = await purgeEndedBatches(db, { policy: scrub, now: later(), dryRun: true });
    expect(report).toMatchObject({ dryRun: true, mode: "scrub", more: false });
    expect(report.batches.map((b) => [b.batchId, b.members, b.status])).toContainEqual([due, 3, "completed"]);
    expect(report.batches.map((b) => b.batchId)).not.toContain(running);
    expect(await state(due)).toEqual(before);
    // Not due yet under the real clock.
    expect((await purgeEndedBatches(db, { policy: scrub, now: new Date(), dryRun: true })).batches).toEqual(
      [],
    );
  });

  it("scrubs in chunks, keeps keys and statuses, marks the batch; a re-run finds nothing", async () => {
    const batchId = await endedBatch(5, "cancel");
    const report = await purgeEndedBatches(db, {
      policy: scrub,
      now: later(),
      dryRun: false,
      chunk: 2,
      actor: "admin",
    });
    expect(report.batches.map((b) => b.batchId)).toContain(batchId);
    const after = await state(batchId);
    expect(after.batch).toMatchObject({ status: "cancelled", purgeMode: "scrub" });
    expect(after.batch.purgedAt).toBeInstanceOf(Date);
    expect(after.members.map((m) => [m.memberKey, m.status, m.dataJson])).toEqual(
      Array.from({ length: 5 }, (_, i) => [`user${i}@contoso.test`, "active", {}]),
    );
    expect(after.steps).toEqual(
      Array.from({ length: 5 }, () => ({ status: "pending", paramsJson: {}, resultJson: null })),
    );
    const again = await purgeEndedBatches(db, { policy: scrub, now: later(), dryRun: false });
    expect(again.batches).toEqual([]);
    const audit = await db
      .selectFrom("events")
      .select(["reason", "actor"])
      .where("batchId", "=", batchId)
      .where("reason", "like", "retention:%")
      .execute();
    expect(audit).toEqual([{ reason: "retention: personal data scrubbed (5 members)", actor: "admin" }]);
  });

  it("resumes a batch a crashed run left half scrubbed", async () => {
    const batchId = await endedBatch(4);
    // The crash: one chunk committed, the batch never marked.
    expect(await scrubMembersChunk(db, { batchId, afterId: 0, chunk: 2 })).toMatchObject({ rows: 2 });
    expect((await state(batchId)).batch.purgedAt).toBeNull();
    await purgeEndedBatches(db, { policy: scrub, now: later(), dryRun: false, chunk: 3 });
    const after = await state(batchId);
    expect(after.members.map((m) => m.dataJson)).toEqual([{}, {}, {}, {}]);
    expect(after.batch.purgeMode).toBe("scrub");
  });

  it("delete mode removes the member and step rows and keeps the batch, marked", async () => {
    const batchId = await endedBatch(3);
    await purgeEndedBatches(db, {
      policy: { days: 90, mode: "delete" },
      now: later(),
      dryRun: false,
      chunk: 2,
    });
    const after = await state(batchId);
    expect(after.members).toEqual([]);
    expect(after.steps).toEqual([]);
    expect(after.batch).toMatchObject({ status: "completed", purgeMode: "delete" });
  });

  it("takes at most maxBatches per run and says more are due; the job runs until none is left", async () => {
    const ids = [await endedBatch(1), await endedBatch(1), await endedBatch(1)];
    const first = await purgeEndedBatches(db, { policy: scrub, now: later(), dryRun: false, maxBatches: 2 });
    expect(first.batches).toHaveLength(2);
    expect(first.more).toBe(true);
    expect(await runRetentionPurge(db, silent, scrub, later())).toBe(1);
    for (const id of ids) expect((await state(id)).batch.purgeMode).toBe("scrub");
    expect(await runRetentionPurge(db, silent, scrub, later())).toBe(0);
  });

  it("logs counts and batch ids, never a member key or value", async () => {
    const batchId = await endedBatch(2);
    const lines: string[] = [];
    const logger = createLogger({
      level: "info",
      name: "retention-test",
      destination: { write: (line: string) => void lines.push(line) },
    });
    expect(await runRetentionPurge(db, logger, scrub, later())).toBe(1);
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ purgedBatches: 1, batchIds: [batchId], members: 2, mode: "scrub" });
    expect(lines[0]).not.toMatch(/contoso|User 0/);
  });
});

describe("startSchedulerService", () => {
  it("runs the purge on its own timer when retention is on", async () => {
    const batchId = await endedBatch(2);
    const runtime = await createEmbeddedRuntime({
      connectionString: database.url,
      db,
      logger: silent,
      pollingIntervalSeconds: 0.1,
    });
    try {
      await startSchedulerService({
        db,
        timers: runtime.timers,
        logger: silent,
        dataSources: { query: async () => [], rows: async function* () {}, accessProblems: async () => [] },
        pollSweepSeconds: 3600,
        tickSeconds: 3600,
        retentionDays: 90,
        retentionMode: "scrub",
        retentionPurgeSeconds: 3600,
        now: later,
      });
      await vi.waitFor(async () => expect((await state(batchId)).batch.purgeMode).toBe("scrub"), {
        timeout: 10_000,
        interval: 100,
      });
    } finally {
      await runtime.stop();
    }
  });
});
