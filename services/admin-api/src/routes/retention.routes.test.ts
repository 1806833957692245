import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

/**
 * POST /api/purge and DELETE /api/members/{key} (issue 31 item 2): roles, dry run against run,
 * what read models show afterwards, the audit rows, the 409s and the Idempotency-Key replay.
 * Batches "ended 100 days ago" are arranged by moving their events back.
 */
let harness: ApiHarness;
let off: ApiHarness;

beforeAll(async () => {
  [harness, off] = await Promise.all([
    startApiHarness({ retention: { retentionDays: 90, retentionMode: "scrub" } }),
    startApiHarness({ retention: { retentionDays: 0, retentionMode: "scrub" } }),
  ]);
  const yaml = testRunbookYaml({ name: "retained" });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});

afterAll(async () => {
  await Promise.all([harness?.stop(), off?.stop()]);
});

let unique = 0;

/** A batch of two members (unique keys unless given); `ended`: cancelled, its events 100 days old. */
async function batch(options: {
  readonly ended: boolean;
  readonly keys?: readonly string[];
}): Promise<number> {
  unique += 1;
  const keys = options.keys ?? [`adele${unique}@contoso.test`, `alex${unique}@contoso.test`];
  const response = await harness.request("POST", "/batches?runbook=retained", {
    body: `UserPrincipalName,Department\n${keys.map((key) => `${key},Sales`).join("\n")}\n`,
    type: "text/csv",
  });
  expect(response.status).toBe(201);
  const id: number = response.body.id;
  if (options.ended) {
    expect((await harness.request("POST", `/batches/${id}/cancel`)).status).toBe(200);
    await sql`UPDATE events SET at = at - interval '100 days' WHERE batch_id = ${id}`.execute(harness.db);
  }
  return id;
}

const members = async (id: number): Promise<Json[]> =>
  (await harness.request("GET", `/batches/${id}/members`)).body;

async function auditOf(id: number, entity: "batch" | "member") {
  return harness.db
    .selectFrom("events")
    .select(["entity", "reason", "actor"])
    .where("batchId", "=", id)
    .where("entity", "=", entity)
    .where("fromStatus", "=", sql<string>`to_status`)
    .where("actor", "is not", null)
    .execute();
}

describe("POST /api/purge", () => {
  it("is Admin only", async () => {
    for (const token of [harness.operatorToken, harness.readerToken]) {
      expect((await harness.request("POST", "/purge?dryRun=true", { token })).status).toBe(403);
    }
    expect((await harness.request("POST", "/purge", { token: null })).status).toBe(401);
  });

  it("dry run lists the due batches and changes nothing; the run purges them, audited, once", async () => {
    const due = await batch({ ended: true });
    const recent = await batch({ ended: false });
    const before = await members(due);
    expect(before.map((m) => m.dataJson)).toEqual([
      expect.objectContaining({ Department: "Sales" }),
      expect.objectContaining({ Department: "Sales" }),
    ]);

    const dry = await harness.request("POST", "/purge?dryRun=true");
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ dryRun: true, mode: "scrub", retentionDays: 90, more: false });
    expect(dry.body.batches).toContainEqual(
      expect.objectContaining({ batchId: due, status: "cancelled", members: 2 }),
    );
    expect(dry.body.batches.map((b: Json) => b.batchId)).not.toContain(recent);
    expect(await members(due)).toEqual(before);
    expect(await auditOf(due, "batch")).toEqual([]);

    const run = await harness.request("POST", "/purge");
    expect(run.status).toBe(200);
    expect(run.body.dryRun).toBe(false);
    expect(run.body.batches.map((b: Json) => b.batchId)).toContain(due);
    const after = await members(due);
    expect(after.map((m) => [m.memberKey, m.status, m.dataJson, m.workerDataJson])).toEqual(
      before.map((m) => [m.memberKey, m.status, {}, {}]),
    );
    const detail = (await harness.request("GET", `/batches/${due}`)).body;
    expect(detail).toMatchObject({ status: "cancelled", purgeMode: "scrub" });
    expect(Date.parse(detail.purgedAt)).not.toBeNaN();
    const listed = (await harness.request("GET", "/batches?status=cancelled")).body.find(
      (b: Json) => b.id === due,
    );
    expect(listed.purgedAt).toBe(detail.purgedAt);
    expect(await auditOf(due, "batch")).toEqual([
      {
        entity: "batch",
        reason: "retention: personal data scrubbed (2 members)",
        actor: "admin@example.test",
      },
    ]);
    // The running batch keeps its data; a second run purges nothing.
    expect((await members(recent)).every((m) => m.dataJson.Department === "Sales")).toBe(true);
    expect((await harness.request("GET", `/batches/${recent}`)).body.purgedAt).toBeNull();
    expect((await harness.request("POST", "/purge")).body.batches).toEqual([]);
  });

  it("answers 409 when retention is off", async () => {
    const response = await off.request("POST", "/purge?dryRun=true");
    expect(response.status).toBe(409);
    expect(response.body.detail).toMatch(/MATOOLKIT_RETENTION_DAYS/);
  });
});

describe("DELETE /api/members/{key}", () => {
  it("is Admin only", async () => {
    for (const token of [harness.operatorToken, harness.readerToken]) {
      expect((await harness.request("DELETE", "/members/anyone", { token })).status).toBe(403);
    }
  });

  it("answers 404 for a key no batch ever had, without echoing it", async () => {
    const response = await harness.request("DELETE", `/members/${encodeURIComponent("ghost@contoso.test")}`);
    expect(response.status).toBe(404);
    expect(JSON.stringify(response.body)).not.toContain("ghost");
  });

  it("erases the key in every ended batch, audited once; others keep their data", async () => {
    const key = "megan-ended@contoso.test";
    const first = await batch({ ended: true, keys: [key, "keep1@contoso.test"] });
    const second = await batch({ ended: true, keys: [key] });
    const response = await harness.request("DELETE", `/members/${encodeURIComponent(key)}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ batchIds: [first, second], erasedMembers: 2, erasedSteps: 0 });
    const rows = await members(first);
    expect(rows.map((m) => [m.memberKey, m.dataJson.Department ?? null, m.erasedAt === null])).toEqual([
      [key, null, false],
      ["keep1@contoso.test", "Sales", true],
    ]);
    expect(await auditOf(first, "member")).toEqual([
      {
        entity: "member",
        reason: "personal data erased (data-subject request)",
        actor: "admin@example.test",
      },
    ]);
    const again = await harness.request("DELETE", `/members/${encodeURIComponent(key)}`);
    expect(again.body).toMatchObject({ erasedMembers: 0 });
    expect(await auditOf(first, "member")).toHaveLength(1);
  });

  it("refuses (409) while the member is in a running batch unless force=true", async () => {
    const key = "lynne-running@contoso.test";
    const ended = await batch({ ended: true, keys: [key] });
    const running = await batch({ ended: false, keys: [key] });
    const refused = await harness.request("DELETE", `/members/${encodeURIComponent(key)}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain(String(running));
    expect(refused.body.detail).not.toContain(key);
    // Nothing changed, not even in the ended batch.
    expect((await members(ended))[0].dataJson.Department).toBe("Sales");

    const forced = await harness.request("DELETE", `/members/${encodeURIComponent(key)}?force=true`);
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ batchIds: [ended, running], erasedMembers: 2 });
    expect((await members(running))[0].dataJson).toEqual({});
  });

  it("honours Idempotency-Key: a retry answers as the first request did", async () => {
    const key = "diego-idem@contoso.test";
    await batch({ ended: true, keys: [key] });
    const headers = { "Idempotency-Key": "0b6f3c1e-erase-request" };
    const first = await harness.request("DELETE", `/members/${encodeURIComponent(key)}`, { headers });
    const retry = await harness.request("DELETE", `/members/${encodeURIComponent(key)}`, { headers });
    expect(first.body.erasedMembers).toBe(1);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    // The stored row keeps the path template, not the key; another key with the same
    // Idempotency-Key is another request (422), named by the template.
    const stored = await harness.db
      .selectFrom("apiIdempotencyKeys")
      .select(["path"])
      .where("key", "=", "0b6f3c1e-erase-request")
      .execute();
    expect(stored).toEqual([{ path: "/api/members/{key}" }]);
    const other = await harness.request(
      "DELETE",
      `/members/${encodeURIComponent("someone-else@contoso.test")}`,
      {
        headers,
      },
    );
    expect(other.status).toBe(422);
    expect(JSON.stringify(other.body)).not.toContain("contoso");
  });
});
