import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedBatch, stepRow, type SeededBatch } from "../test/test-fixtures.ts";
import { transitionBatch } from "./batches.repository.ts";
import type { Db } from "./connection.ts";
import { recordAuditEvent } from "./events.repository.ts";
import { insertInits } from "./inits.repository.ts";
import { eraseMemberKey, listMemberKeyRows } from "./member-erasure.repository.ts";
import {
  DELETED_TABLES,
  deleteBatchRowsChunk,
  listPurgeCandidates,
  markBatchPurged,
  scrubExecutionsChunk,
  scrubMembersChunk,
} from "./retention.repository.ts";
import { insertSteps } from "./steps.repository.ts";

/** Retention (issue 31 item 2) against real rows: what each chunk statement touches and keeps. */
let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

const future = () => new Date(Date.now() + 24 * 60 * 60 * 1000);

/** A batch of `members` members, each with a step holding params, a result and an error, and an init. */
async function endedBatch(members: number, end: "complete" | "fail" | "cancel" | "none" = "complete") {
  const seeded = await seedBatch(db, members);
  await insertSteps(
    db,
    seeded.members.map((member) =>
      stepRow(seeded, member, 0, {
        paramsJson: { Identity: `${member.memberKey}@contoso.test` },
        resultJson: { mailbox: "Jane Doe" },
        errorMessage: "user Jane Doe not found",
        errorCode: "graph.not_found",
      }),
    ),
  );
  await insertInits(db, [
    {
      batchId: seeded.batch.id,
      runbookVersion: 1,
      stepIndex: 0,
      stepName: "init",
      workerId: "w",
      functionName: "F",
      paramsJson: { Group: "Sales" },
      resultJson: { id: "g-1" },
    },
  ]);
  await sql`UPDATE batch_members SET worker_data_json = '{"Mailbox":"x"}'::jsonb WHERE batch_id = ${seeded.batch.id}`.execute(
    db,
  );
  if (end === "none") return seeded;
  if (end === "complete") await transitionBatch(db, seeded.batch.id, "activate");
  await transitionBatch(db, seeded.batch.id, end);
  return seeded;
}

async function memberRows(seeded: SeededBatch) {
  return db
    .selectFrom("batchMembers")
    .select(["memberKey", "status", "dataJson", "workerDataJson"])
    .where("batchId", "=", seeded.batch.id)
    .orderBy("id")
    .execute();
}

async function stepRows(seeded: SeededBatch) {
  return db
    .selectFrom("stepExecutions")
    .select(["stepName", "status", "paramsJson", "resultJson", "errorMessage", "errorCode"])
    .where("batchId", "=", seeded.batch.id)
    .orderBy("id")
    .execute();
}

describe("listPurgeCandidates", () => {
  it("lists ended, unpurged batches whose end is before the cutoff, with their member counts", async () => {
    const completed = await endedBatch(3);
    const cancelled = await endedBatch(1, "cancel");
    const running = await endedBatch(1, "none");
    const ids = async (endedBefore: Date) =>
      (await listPurgeCandidates(db, { endedBefore, limit: 100 })).map((c) => c.batchId);
    expect(await ids(new Date(Date.now() - 60_000))).not.toContain(completed.batch.id);
    const due = await listPurgeCandidates(db, { endedBefore: future(), limit: 100 });
    expect(due.map((c) => c.batchId)).toEqual(
      expect.arrayContaining([completed.batch.id, cancelled.batch.id]),
    );
    expect(due.map((c) => c.batchId)).not.toContain(running.batch.id);
    expect(due.find((c) => c.batchId === completed.batch.id)).toMatchObject({
      status: "completed",
      members: 3,
    });

    expect(await markBatchPurged(db, { batchId: completed.batch.id, mode: "scrub", members: 3 })).toBe(true);
    expect(await ids(future())).not.toContain(completed.batch.id);
  });
});

describe("scrub", () => {
  it("empties data, params, results and error messages in chunks; keys, statuses and codes stay", async () => {
    const seeded = await endedBatch(5);
    const ids = seeded.members.map((m) => m.id);
    const range = (afterId: number, chunk: number) => ({ batchId: seeded.batch.id, afterId, chunk });
    expect(await scrubMembersChunk(db, range(0, 2))).toEqual({ rows: 2, lastId: ids[1] });
    expect((await memberRows(seeded)).map((m) => m.dataJson)).toEqual([
      {},
      {},
      { Index: 2 },
      { Index: 3 },
      { Index: 4 },
    ]);
    // Started over at 0 (a run after a crash): the scrubbed rows are skipped.
    expect(await scrubMembersChunk(db, range(0, 2))).toEqual({ rows: 2, lastId: ids[3] });
    expect(await scrubMembersChunk(db, range(ids[3]!, 2))).toEqual({ rows: 1, lastId: ids[4] });
    // Idempotent: nothing is left to touch.
    expect(await scrubMembersChunk(db, range(0, 2))).toEqual({ rows: 0, lastId: null });
    expect(await memberRows(seeded)).toEqual(
      seeded.members.map((m) => ({
        memberKey: m.memberKey,
        status: "active",
        dataJson: {},
        workerDataJson: {},
      })),
    );

    // A for_each value is member data too; one step is expanded, the others never were.
    await sql`UPDATE step_executions SET item_value = '"Sales-EMEA"'::jsonb
      WHERE id = (SELECT min(id) FROM step_executions WHERE batch_id = ${seeded.batch.id})`.execute(db);
    expect(await scrubExecutionsChunk(db, "step_executions", range(0, 10))).toMatchObject({ rows: 5 });
    const items = await sql<{ item: string | null }>`
      SELECT item_value::text AS item FROM step_executions WHERE batch_id = ${seeded.batch.id} ORDER BY id`.execute(
      db,
    );
    // JSON null, not SQL NULL: SQL NULL means "not expanded yet" and would be claimed again.
    expect(items.rows.map((row) => row.item)).toEqual(["null", null, null, null, null]);
    expect(await scrubExecutionsChunk(db, "step_executions", range(0, 10))).toMatchObject({ rows: 0 });
    expect(await stepRows(seeded)).toEqual(
      Array.from({ length: 5 }, () => ({
        stepName: "step-0",
        status: "pending",
        paramsJson: {},
        resultJson: null,
        errorMessage: null,
        errorCode: "graph.not_found",
      })),
    );
    expect(await scrubExecutionsChunk(db, "init_executions", range(0, 10))).toMatchObject({ rows: 1 });
    const init = await db
      .selectFrom("initExecutions")
      .select(["paramsJson", "resultJson"])
      .where("batchId", "=", seeded.batch.id)
      .executeTakeFirstOrThrow();
    expect(init).toEqual({ paramsJson: {}, resultJson: null });
  });

  it("leaves other batches alone", async () => {
    const purged = await endedBatch(1);
    const other = await endedBatch(1);
    await scrubMembersChunk(db, { batchId: purged.batch.id, afterId: 0, chunk: 10 });
    await scrubExecutionsChunk(db, "step_executions", { batchId: purged.batch.id, afterId: 0, chunk: 10 });
    expect((await memberRows(other))[0]!.dataJson).toEqual({ Index: 0 });
    expect((await stepRows(other))[0]!.resultJson).toEqual({ mailbox: "Jane Doe" });
  });
});

describe("delete", () => {
  it("removes the batch's member, phase, step and init rows; keeps the batch, its timeline and audit rows", async () => {
    const seeded = await endedBatch(3);
    await recordAuditEvent(db, {
      batchId: seeded.batch.id,
      entity: "member",
      entityId: seeded.members[0]!.id,
      fromStatus: "active",
      toStatus: "active",
      reason: "an operator's action",
      actor: "alice",
    });
    await sql`INSERT INTO events (batch_id, entity, entity_id, from_status, to_status)
      VALUES (${seeded.batch.id}, 'member', ${seeded.members[1]!.id}, 'active', 'failed')`.execute(db);
    for (const table of DELETED_TABLES) {
      let afterId = 0;
      for (;;) {
        const done = await deleteBatchRowsChunk(db, table, { batchId: seeded.batch.id, afterId, chunk: 2 });
        if (done.lastId === null) break;
        expect(done.rows).toBeLessThanOrEqual(2);
        afterId = done.lastId;
      }
    }
    expect(await memberRows(seeded)).toEqual([]);
    expect(await stepRows(seeded)).toEqual([]);
    const left = await sql<{ n: string | number }>`
      SELECT (SELECT count(*) FROM phase_executions WHERE batch_id = ${seeded.batch.id})
           + (SELECT count(*) FROM init_executions WHERE batch_id = ${seeded.batch.id}) AS n`.execute(db);
    expect(Number(left.rows[0]!.n)).toBe(0);
    const events = await db
      .selectFrom("events")
      .select(["entity", "actor"])
      .where("batchId", "=", seeded.batch.id)
      .execute();
    expect(events.some((e) => e.entity === "batch")).toBe(true);
    expect(events.filter((e) => e.entity !== "batch")).toEqual([{ entity: "member", actor: "alice" }]);
    await sql`INSERT INTO batch_source_fingerprints (batch_id, fingerprint) VALUES (${seeded.batch.id}, 'f')`.execute(
      db,
    );
    expect(await markBatchPurged(db, { batchId: seeded.batch.id, mode: "delete", members: 3 })).toBe(true);
    const fingerprints = await db
      .selectFrom("batchSourceFingerprints")
      .select("batchId")
      .where("batchId", "=", seeded.batch.id)
      .execute();
    expect(fingerprints).toEqual([]);
  });
});

describe("markBatchPurged", () => {
  it("marks once, with one audit row; refuses a batch that is not ended", async () => {
    const seeded = await endedBatch(2, "fail");
    const input = {
      batchId: seeded.batch.id,
      mode: "scrub" as const,
      members: 2,
      actor: "admin@contoso.test",
    };
    expect(await markBatchPurged(db, input)).toBe(true);
    expect(await markBatchPurged(db, input)).toBe(false);
    const batch = await db
      .selectFrom("batches")
      .select(["purgedAt", "purgeMode", "status"])
      .where("id", "=", seeded.batch.id)
      .executeTakeFirstOrThrow();
    expect(batch).toMatchObject({ purgeMode: "scrub", status: "failed" });
    expect(batch.purgedAt).toBeInstanceOf(Date);
    const audit = await db
      .selectFrom("events")
      .select(["fromStatus", "toStatus", "reason", "actor"])
      .where("batchId", "=", seeded.batch.id)
      .where("reason", "like", "retention:%")
      .execute();
    expect(audit).toEqual([
      {
        fromStatus: "failed",
        toStatus: "failed",
        reason: "retention: personal data scrubbed (2 members)",
        actor: "admin@contoso.test",
      },
    ]);
    const running = await endedBatch(1, "none");
    expect(await markBatchPurged(db, { batchId: running.batch.id, mode: "scrub", members: 1 })).toBe(false);
  });
});

describe("eraseMemberKey", () => {
  it("erases the key's rows in every batch with one audit row each, once; other members keep their data", async () => {
    const first = await endedBatch(2);
    const second = await endedBatch(2, "none");
    const key = first.members[1]!.memberKey;
    await sql`UPDATE batch_members SET member_key = ${"erase-me"} WHERE id IN (${first.members[1]!.id}, ${second.members[0]!.id})`.execute(
      db,
    );
    expect((await listMemberKeyRows(db, "erase-me")).map((r) => [r.batchId, r.batchStatus])).toEqual([
      [first.batch.id, "completed"],
      [second.batch.id, "detected"],
    ]);
    expect(await eraseMemberKey(db, "erase-me", "dpo@contoso.test")).toEqual({ members: 2, steps: 2 });
    expect(await eraseMemberKey(db, "erase-me", "dpo@contoso.test")).toEqual({ members: 0, steps: 0 });
    const rows = await listMemberKeyRows(db, "erase-me");
    expect(rows.every((r) => r.erasedAt instanceof Date)).toBe(true);
    expect((await memberRows(first)).map((m) => [m.memberKey, m.dataJson, m.workerDataJson])).toEqual([
      [first.members[0]!.memberKey, { Index: 0 }, { Mailbox: "x" }],
      ["erase-me", {}, {}],
    ]);
    expect((await stepRows(first)).map((s) => s.paramsJson)).toEqual([
      { Identity: `${first.members[0]!.memberKey}@contoso.test` },
      {},
    ]);
    const audit = await db
      .selectFrom("events")
      .select(["entityId", "reason", "actor"])
      .where("actor", "=", "dpo@contoso.test")
      .orderBy("id")
      .execute();
    expect(audit).toEqual([
      {
        entityId: first.members[1]!.id,
        reason: "personal data erased (data-subject request)",
        actor: "dpo@contoso.test",
      },
      {
        entityId: second.members[0]!.id,
        reason: "personal data erased (data-subject request)",
        actor: "dpo@contoso.test",
      },
    ]);
    expect(key).not.toBe("erase-me");
    expect(await eraseMemberKey(db, "nobody", "dpo@contoso.test")).toEqual({ members: 0, steps: 0 });
  });
});
