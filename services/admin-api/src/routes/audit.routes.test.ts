import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";
import { auditEventSchema } from "./audit.routes.ts";
import { expectDocumentedBody } from "../../test/routes/batch-members.test-support.ts";

/**
 * GET /api/audit and the actor of every operator write (issue 12): who published, switched,
 * created, advanced, added, removed, cancelled, deactivated — each recorded in the write's own
 * transaction and readable in id order.
 */
let harness: ApiHarness;
const ADMIN = "admin@example.test";
const OPERATOR = "operator@example.test";
const csv = "UserPrincipalName\nadele@contoso.test\nalex@contoso.test\n";

beforeAll(async () => {
  harness = await startApiHarness();
});

afterAll(async () => {
  await harness?.stop();
});

async function ok(response: Promise<{ status: number; body: Json; text: string }>, status: number) {
  const answered = await response;
  expect(answered.status, answered.text).toBe(status);
  return answered.body;
}

const asOperator = { token: () => harness.operatorToken };

/** Every audit row, following the Link headers a page at a time. */
async function wholeTrail(query = "", token?: string): Promise<Json[]> {
  const rows: Json[] = [];
  let next: string | undefined = `/audit?limit=3${query}`;
  while (next !== undefined) {
    const response = await harness.request("GET", next, { token: token ?? harness.adminToken });
    expect(response.status).toBe(200);
    rows.push(...response.body);
    const link = response.headers.get("link");
    next = link === null ? undefined : /^<\/api(\/audit\?[^>]+)>; rel="next"$/.exec(link)![1];
  }
  return rows;
}

const brief = (row: Json) => [row.actor, row.entity, row.fromStatus, row.toStatus];

describe("the actor of every operator write", () => {
  let batchId: number;
  let runbookVersionId: number;
  let trailStart: number;

  beforeAll(async () => {
    const before = await harness.request("GET", "/audit?limit=1000");
    trailStart = before.body.at(-1)?.id ?? 0;
    const yaml = testRunbookYaml({ name: "audited", phases: ["first", "second"] });
    const published = await ok(
      harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" }),
      201,
    );
    runbookVersionId = published.id;
    await ok(
      harness.request("PUT", "/runbooks/audited/automation", {
        body: JSON.stringify({ enabled: true }),
        type: "application/json",
      }),
      200,
    );
    // Repeating the current setting changes nothing: no second row.
    await ok(
      harness.request("PUT", "/runbooks/audited/automation", {
        body: JSON.stringify({ enabled: true }),
        type: "application/json",
      }),
      200,
    );
    await ok(
      harness.request("PUT", "/runbooks/audited/automation", {
        body: JSON.stringify({ enabled: false }),
        type: "application/json",
      }),
      200,
    );
    batchId = (
      await ok(harness.request("POST", "/batches?runbook=audited", { body: csv, type: "text/csv" }), 201)
    ).id;
    const token = asOperator.token();
    await ok(harness.request("POST", `/batches/${batchId}/advance`, { token }), 202);
    const added = await ok(
      harness.request("POST", `/batches/${batchId}/members`, {
        token,
        body: "UserPrincipalName\nmegan@contoso.test\n",
        type: "text/csv",
      }),
      201,
    );
    await ok(harness.request("DELETE", `/batches/${batchId}/members/${added.members[0].id}`, { token }), 200);
    await ok(harness.request("POST", `/batches/${batchId}/cancel`, { token }), 200);
    await ok(harness.request("DELETE", "/runbooks/audited/versions/1"), 200);
  });

  it("records each write once, oldest first, with who made it", async () => {
    const trail = (await wholeTrail()).filter((row) => row.id > trailStart);
    for (const row of trail) expectDocumentedBody(auditEventSchema, row);
    const memberId = trail.find((row) => row.entity === "member")!.entityId;
    expect(trail.map(brief)).toEqual([
      [ADMIN, "runbook", null, "active"],
      [ADMIN, "automation", "disabled", "enabled"],
      [ADMIN, "automation", "enabled", "disabled"],
      [ADMIN, "batch", null, "detected"],
      [ADMIN, "batch", "detected", "active"],
      [OPERATOR, "phase", "pending", "dispatched"],
      [OPERATOR, "member", null, "active"],
      [OPERATOR, "member", "active", "removed"],
      // The batch's own cancel only: its phases and steps are its consequences (no actor).
      [OPERATOR, "batch", "active", "cancelled"],
      [ADMIN, "runbook", "active", "inactive"],
    ]);
    expect(trail[0]).toMatchObject({
      entityId: runbookVersionId,
      batchId: null,
      reason: "published audited version 1",
    });
    expect(trail[1]).toMatchObject({ entityId: runbookVersionId, batchId: null });
    expect(trail.slice(3, 9).every((row: Json) => row.batchId === batchId)).toBe(true);
    expect(trail[6]).toMatchObject({ entityId: memberId, reason: "added by operator" });
  });

  it("shows the actor on the batch's own timeline too", async () => {
    const page = await ok(harness.request("GET", `/batches/${batchId}/events?limit=1000`), 200);
    const created = page.items.find((row: Json) => row.entity === "batch" && row.fromStatus === null);
    expect(created).toMatchObject({ actor: ADMIN, toStatus: "detected" });
    const cancelled = page.items.find((row: Json) => row.entity === "batch" && row.toStatus === "cancelled");
    expect(cancelled.actor).toBe(OPERATOR);
    // Cascades are the system's: the phase the cancel ended has no actor.
    const phaseCancelled = page.items.find(
      (row: Json) => row.entity === "phase" && row.toStatus === "cancelled",
    );
    expect(phaseCancelled.actor).toBeNull();
  });

  it("filters by actor and by batch, with the filters kept in the next page's link", async () => {
    const mine = (await wholeTrail(`&actor=${encodeURIComponent(OPERATOR)}`)).filter(
      (row) => row.id > trailStart,
    );
    expect(mine.map(brief)).toEqual([
      [OPERATOR, "phase", "pending", "dispatched"],
      [OPERATOR, "member", null, "active"],
      [OPERATOR, "member", "active", "removed"],
      [OPERATOR, "batch", "active", "cancelled"],
    ]);
    const first = await harness.request(
      "GET",
      `/audit?limit=1&batchId=${batchId}&actor=${encodeURIComponent(OPERATOR)}`,
    );
    expect(first.headers.get("link")).toBe(
      `</api/audit?afterId=${first.body[0].id}&limit=1&actor=${encodeURIComponent(OPERATOR)}&batchId=${batchId}>; rel="next"`,
    );
    const ofBatch = await wholeTrail(`&batchId=${batchId}`);
    expect(ofBatch.map((row) => row.batchId)).toEqual(Array(ofBatch.length).fill(batchId));
    expect(ofBatch.map(brief)).toEqual([
      [ADMIN, "batch", null, "detected"],
      [ADMIN, "batch", "detected", "active"],
      [OPERATOR, "phase", "pending", "dispatched"],
      [OPERATOR, "member", null, "active"],
      [OPERATOR, "member", "active", "removed"],
      [OPERATOR, "batch", "active", "cancelled"],
    ]);
    expect(await wholeTrail("&actor=nobody@example.test")).toEqual([]);
  });
});

describe("GET /api/audit", () => {
  it("pages by id: afterId, limit and a Link to the next page until the end", async () => {
    for (const name of ["paged-a", "paged-b", "paged-c"]) {
      const yaml = testRunbookYaml({ name });
      await ok(harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" }), 201);
    }
    const all = await ok(harness.request("GET", "/audit?limit=1000"), 200);
    const ids = all.map((row: Json) => row.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
    const afterId = ids.at(-3);
    const page = await harness.request("GET", `/audit?afterId=${afterId}&limit=1`);
    expect(page.body.map((row: Json) => row.id)).toEqual([ids.at(-2)]);
    expect(page.headers.get("link")).toBe(`</api/audit?afterId=${ids.at(-2)}&limit=1>; rel="next"`);
    const last = await harness.request("GET", `/audit?afterId=${ids.at(-2)}&limit=1`);
    expect(last.body.map((row: Json) => row.reason)).toEqual(["published paged-c version 1"]);
    expect(last.headers.get("link")).toBeNull();
    expect((await harness.request("GET", `/audit?afterId=${ids.at(-1)}`)).body).toEqual([]);
  });

  it("is readable with any role of the API, not without a token", async () => {
    for (const token of [harness.readerToken, harness.operatorToken, harness.adminToken]) {
      expect((await harness.request("GET", "/audit?limit=1", { token })).status).toBe(200);
    }
    expect((await harness.request("GET", "/audit", { token: null })).status).toBe(401);
  });

  it("names a bad parameter", async () => {
    for (const [query, name] of [
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["afterId=-1", "afterId"],
      ["batchId=x", "batchId"],
      ["actor=", "actor"],
    ]) {
      const response = await harness.request("GET", `/audit?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.detail).toContain(`'${name}'`);
    }
  });
});
