import { createHash } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";
import { defaultRequestLimits } from "../http/request-limits.ts";

/**
 * Idempotency-Key on the admin API's POSTs (issue 12, IETF draft "The Idempotency-Key HTTP
 * Header Field"): a retry with the same key gets the first answer again, and acts only once.
 */
let harness: ApiHarness;
const csv = "UserPrincipalName\nadele@contoso.test\nalex@contoso.test\n";

beforeAll(async () => {
  // Five identical requests race below from one caller: more than a caller may run by default.
  harness = await startApiHarness({
    requestLimits: { ...defaultRequestLimits, heavyPerCaller: 5, heavyTotal: 5 },
  });
  const yaml = testRunbookYaml({ name: "keyed", phases: ["first", "second"] });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});

afterAll(async () => {
  await harness?.stop();
});

const createBatch = (
  key: string | undefined,
  body = csv,
  options: { token?: string; runbook?: string } = {},
) =>
  harness.request("POST", `/batches?runbook=${options.runbook ?? "keyed"}`, {
    body,
    type: "text/csv",
    ...(options.token === undefined ? {} : { token: options.token }),
    ...(key === undefined ? {} : { headers: { "Idempotency-Key": key } }),
  });

async function batchCount(): Promise<number> {
  const { n } = await harness.db
    .selectFrom("batches")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(n);
}

describe("a retried POST with the same Idempotency-Key", () => {
  it("answers the first response again, marked as replayed, and creates one batch", async () => {
    const before = await batchCount();
    const first = await createBatch('"create-once-1"');
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await createBatch('"create-once-1"');
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    // The bare form of the same key is the same key.
    expect((await createBatch("create-once-1")).body.id).toBe(first.body.id);
    expect(await batchCount()).toBe(before + 1);
  });

  it("advances once: the retry replays 202 instead of dispatching the next phase", async () => {
    const id = (await createBatch(undefined)).body.id;
    const headers = { "Idempotency-Key": `advance-${id}` };
    const first = await harness.request("POST", `/batches/${id}/advance`, { headers });
    const again = await harness.request("POST", `/batches/${id}/advance`, { headers });
    expect(first.status).toBe(202);
    expect(again).toMatchObject({ status: 202, body: first.body });
    const phases = await harness.request("GET", `/batches/${id}/phases`);
    expect(phases.body.map((phase: Json) => phase.status)).toEqual(["dispatched", "pending"]);
  });

  it("refuses the same key with another body or path (422), writing nothing", async () => {
    expect((await createBatch("reused-1")).status).toBe(201);
    const before = await batchCount();
    const otherBody = await createBatch("reused-1", "UserPrincipalName\nmegan@contoso.test\n");
    expect({ status: otherBody.status, code: otherBody.body.code }).toEqual({
      status: 422,
      code: "idempotency.key_reused",
    });
    expect(otherBody.body.detail).toContain("POST /api/batches with another query or body");
    const id = (await createBatch(undefined)).body.id;
    const otherPath = await harness.request("POST", `/batches/${id}/cancel`, {
      headers: { "Idempotency-Key": "reused-1" },
    });
    expect({ status: otherPath.status, code: otherPath.body.code }).toEqual({
      status: 422,
      code: "idempotency.key_reused",
    });
    expect(await batchCount()).toBe(before + 1);
    expect((await harness.request("GET", `/batches/${id}`)).body.status).toBe("active");
  });

  it("acts once when both requests arrive at the same time: the other waits (409) or replays", async () => {
    const before = await batchCount();
    const responses = await Promise.all(Array.from({ length: 5 }, () => createBatch("concurrent-1")));
    const created = responses.filter((response) => response.status === 201);
    const inFlight = responses.filter((response) => response.status === 409);
    expect(created.length + inFlight.length).toBe(5);
    expect(new Set(created.map((response) => response.body.id)).size).toBe(1);
    for (const response of inFlight) expect(response.body.code).toBe("idempotency.in_progress");
    expect(await batchCount()).toBe(before + 1);
    // Once the first has finished, a retry gets its answer.
    const retry = await createBatch("concurrent-1");
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.id).toBe(created[0]!.body.id);
  });

  it("frees the key when the request fails, so the corrected retry acts", async () => {
    const missing = await createBatch("after-failure-1", csv, { runbook: "keyed-later" });
    expect(missing.status).toBe(404);
    const yaml = testRunbookYaml({ name: "keyed-later" });
    expect(
      (await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status,
    ).toBe(201);
    const retry = await createBatch("after-failure-1", csv, { runbook: "keyed-later" });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
  });

  it("keeps keys apart per caller", async () => {
    const mine = await createBatch(undefined);
    const theirs = await createBatch(undefined);
    const headers = { "Idempotency-Key": "per-caller-1" };
    const byAdmin = await harness.request("POST", `/batches/${mine.body.id}/cancel`, { headers });
    const byOperator = await harness.request("POST", `/batches/${theirs.body.id}/cancel`, {
      headers,
      token: harness.operatorToken,
    });
    expect([byAdmin.status, byOperator.status]).toEqual([200, 200]);
    expect(byOperator.headers.get("idempotent-replayed")).toBeNull();
  });

  it("acts again once the key has expired (24 h)", async () => {
    const first = await createBatch("expiring-1");
    await sql`UPDATE api_idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'expiring-1'`.execute(
      harness.db,
    );
    const later = await createBatch("expiring-1");
    expect(later.status).toBe(201);
    expect(later.body.id).not.toBe(first.body.id);
  });

  it("takes over a claim abandoned mid-request (its process died), but not a fresh one", async () => {
    const subject = await harness.db
      .selectFrom("apiIdempotencyKeys")
      .select("subject")
      .limit(1)
      .executeTakeFirstOrThrow();
    // What the request below sends: its query string and body.
    const fingerprint = createHash("sha256").update("runbook=keyed").update("\n").update(csv).digest("hex");
    const claim = (key: string, age: string) =>
      sql`INSERT INTO api_idempotency_keys (subject, key, method, path, fingerprint, claim_id, created_at, expires_at)
        VALUES (${subject.subject}, ${key}, 'POST', '/api/batches', ${fingerprint}, gen_random_uuid(),
          now() - ${age}::interval, now() + interval '1 day')`.execute(harness.db);
    await claim("stuck-fresh", "1 second");
    await claim("stuck-old", "11 minutes");
    const fresh = await createBatch("stuck-fresh");
    expect({ status: fresh.status, code: fresh.body.code }).toEqual({
      status: 409,
      code: "idempotency.in_progress",
    });
    expect((await createBatch("stuck-old")).status).toBe(201);
  });
});

describe("the Idempotency-Key header itself", () => {
  it("is optional: without it every POST acts", async () => {
    const before = await batchCount();
    expect((await createBatch(undefined)).status).toBe(201);
    expect((await createBatch(undefined)).status).toBe(201);
    expect(await batchCount()).toBe(before + 2);
  });

  it("must be 1-200 visible ASCII characters: else 400 naming the header, nothing written", async () => {
    const before = await batchCount();
    for (const key of ['""', "x".repeat(201), "with space", "tab\there"]) {
      const response = await harness.request("POST", "/batches?runbook=keyed", {
        body: csv,
        type: "text/csv",
        headers: { "Idempotency-Key": key },
      });
      expect(response.status, key).toBe(400);
      expect(response.body.detail).toContain(
        "Idempotency-Key header must be 1 to 200 visible ASCII characters",
      );
      if (key.length > 2) expect(response.text, "the value is never echoed").not.toContain(key.slice(0, 20));
    }
    expect(await batchCount()).toBe(before);
  });

  it("is ignored by the query preview, which writes nothing", async () => {
    const response = await harness.request("POST", "/runbooks/keyed/query/preview", {
      headers: { "Idempotency-Key": "preview-1" },
    });
    expect(response.status).not.toBe(400);
    const stored = await harness.db
      .selectFrom("apiIdempotencyKeys")
      .select("key")
      .where("key", "=", "preview-1")
      .execute();
    expect(stored).toEqual([]);
  });
});
