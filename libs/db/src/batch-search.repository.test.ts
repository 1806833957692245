import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setExternalRefFromMembers } from "./batch-external-ref.repository.ts";
import { getBatch, insertBatch, listBatches } from "./batches.repository.ts";
import type { Db } from "./connection.ts";
import { listEvents } from "./events.repository.ts";
import { insertMembers, transitionMember } from "./members.repository.ts";
import { findMemberBatches } from "./member-search.repository.ts";
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

async function newRunbook(name = uniqueName("search")) {
  return publishRunbook(db, {
    name,
    yamlContent: "phases: []\n",
    overdueBehavior: "rerun",
    rerunInit: false,
  });
}

async function newBatch(
  runbookId: number,
  options: { createdBy?: string | null; externalRef?: string | null; detectedAt?: string } = {},
) {
  const batch = await insertBatch(db, {
    runbookId,
    batchStartTime: null,
    isManual: true,
    createdBy: options.createdBy ?? null,
    externalRef: options.externalRef ?? null,
  });
  if (options.detectedAt !== undefined) {
    await db
      .updateTable("batches")
      .set({ detectedAt: options.detectedAt })
      .where("id", "=", batch.id)
      .execute();
  }
  return batch;
}

describe("listBatches filters (issue 31)", () => {
  it("filters by initiator, creation time range and external reference, newest first", async () => {
    const runbook = await newRunbook();
    const old = await newBatch(runbook.id, { createdBy: "ada", detectedAt: "2030-01-01T00:00:00Z" });
    const mid = await newBatch(runbook.id, {
      createdBy: "ada",
      externalRef: "CHG-1",
      detectedAt: "2030-01-10T00:00:00Z",
    });
    const other = await newBatch(runbook.id, {
      createdBy: "bob",
      externalRef: "CHG-1",
      detectedAt: "2030-01-20T00:00:00Z",
    });
    const list = (filter: Parameters<typeof listBatches>[1]) =>
      listBatches(db, { runbookName: runbook.name, ...filter }).then((rows) => rows.map((row) => row.id));
    const page = { limit: 10, offset: 0 };

    expect(await list({ ...page, createdBy: "ada" })).toEqual([mid.id, old.id]);
    expect(await list({ ...page, createdBy: "Ada" })).toEqual([]);
    expect(await list({ ...page, externalRef: "CHG-1" })).toEqual([other.id, mid.id]);
    expect(await list({ ...page, externalRef: "chg-1" })).toEqual([]);
    // After is inclusive, before exclusive: adjacent ranges never count a batch twice.
    expect(await list({ ...page, createdAfter: new Date("2030-01-10T00:00:00Z") })).toEqual([
      other.id,
      mid.id,
    ]);
    expect(await list({ ...page, createdBefore: new Date("2030-01-10T00:00:00Z") })).toEqual([old.id]);
    expect(
      await list({
        ...page,
        createdBy: "ada",
        createdAfter: new Date("2030-01-05T00:00:00Z"),
        createdBefore: new Date("2030-02-01T00:00:00Z"),
        externalRef: "CHG-1",
      }),
    ).toEqual([mid.id]);
    expect(await list({ limit: 1, offset: 1, externalRef: "CHG-1" })).toEqual([mid.id]);
  });

  it("refuses an external reference the column's bound does not allow", async () => {
    const runbook = await newRunbook();
    await expect(newBatch(runbook.id, { externalRef: "x".repeat(129) })).rejects.toThrow(
      /batches_external_ref_length/,
    );
  });
});

describe("findMemberBatches (issue 31)", () => {
  it("finds every batch a key is or was in, case-insensitively, newest batch first, paged", async () => {
    const first = await newRunbook();
    const second = await newRunbook();
    const key = `${uniqueName("Adele")}@Contoso.com`;
    const a = await newBatch(first.id, { externalRef: "CHG-7" });
    const b = await newBatch(second.id);
    const c = await newBatch(second.id);
    const [inA] = await insertMembers(db, a.id, [{ memberKey: key, data: { Secret: "s" } }]);
    await transitionMember(db, inA!.id, "remove");
    const [back] = await insertMembers(db, a.id, [{ memberKey: key.toUpperCase(), data: {} }]);
    const [inB] = await insertMembers(db, b.id, [{ memberKey: key.toLowerCase(), data: {} }]);
    await insertMembers(db, c.id, [{ memberKey: `someone-else-${key}`, data: {} }]);

    const found = await findMemberBatches(db, key, { limit: 10, offset: 0 });
    expect(found.map((row) => [row.batchId, row.memberId, row.memberStatus])).toEqual([
      [b.id, inB!.id, "active"],
      [a.id, back!.id, "active"],
      [a.id, inA!.id, "removed"],
    ]);
    expect(found[2]).toMatchObject({
      memberKey: key,
      runbookName: first.name,
      runbookVersion: first.version,
      batchStatus: "detected",
      isManual: true,
      externalRef: "CHG-7",
    });
    expect(found[2]!.removedAt).toBeInstanceOf(Date);
    expect(found.map((row) => row.erasedAt)).toEqual([null, null, null]);
    expect(found[2]).not.toHaveProperty("dataJson");
    const paged = await findMemberBatches(db, key, { limit: 1, offset: 1 });
    expect(paged.map((row) => row.memberId)).toEqual([back!.id]);
    expect(await findMemberBatches(db, `x${key}`, { limit: 10, offset: 0 })).toEqual([]);
  });

  it("is answered from the lower(member_key) index", async () => {
    const plan = await sql<{ "QUERY PLAN": string }>`
      EXPLAIN SELECT id FROM batch_members WHERE lower(member_key) = lower('a@b.c')
    `.execute(db);
    // Tiny tables may be scanned: only forbid the plan that would not use the index at all.
    await sql`SET enable_seqscan = off`.execute(db);
    const forced = await sql<{ "QUERY PLAN": string }>`
      EXPLAIN SELECT id FROM batch_members WHERE lower(member_key) = lower('a@b.c')
    `.execute(db);
    await sql`SET enable_seqscan = on`.execute(db);
    expect(plan.rows.length).toBeGreaterThan(0);
    expect(forced.rows.map((row) => row["QUERY PLAN"]).join("\n")).toContain("batch_members_lower_key_idx");
  });
});

describe("setExternalRefFromMembers (issue 31)", () => {
  it("takes the first member's non-empty valid value and keeps one already given", async () => {
    const runbook = await newRunbook();
    const batch = await newBatch(runbook.id);
    await insertMembers(db, batch.id, [
      { memberKey: "m1", data: { TicketId: "" } },
      { memberKey: "m2", data: {} },
      { memberKey: "m3", data: { TicketId: "bad\nvalue" } },
      { memberKey: "m4", data: { TicketId: " CHG-42 " } },
      { memberKey: "m5", data: { TicketId: "CHG-43" } },
    ]);
    expect(await setExternalRefFromMembers(db, batch.id, "TicketId")).toBe("CHG-42");
    expect((await getBatch(db, batch.id))?.externalRef).toBe("CHG-42");
    const timeline = await listEvents(db, batch.id, { limit: 10 });
    expect(timeline.map((event) => [event.fromStatus, event.toStatus, event.reason])).toEqual([
      [null, "detected", "created"],
      ["detected", "detected", "external ref CHG-42 (from TicketId)"],
    ]);

    const given = await newBatch(runbook.id, { externalRef: "REQ-1" });
    await insertMembers(db, given.id, [{ memberKey: "m1", data: { TicketId: "CHG-9" } }]);
    await setExternalRefFromMembers(db, given.id, "TicketId");
    expect((await getBatch(db, given.id))?.externalRef).toBe("REQ-1");
    expect((await listEvents(db, given.id, { limit: 10 })).map((event) => event.reason)).toEqual([
      "created (external ref REQ-1)",
    ]);

    const none = await newBatch(runbook.id);
    await insertMembers(db, none.id, [{ memberKey: "m1", data: { TicketId: "  " } }]);
    expect(await setExternalRefFromMembers(db, none.id, "TicketId")).toBeNull();
    expect((await getBatch(db, none.id))?.externalRef).toBeNull();
  });
});
