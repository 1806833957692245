import { getWebhookForDelivery, listPhases, transitionBatch, transitionPhase, type Db } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

/** Issue 12: webhook registration (secret shown once), deliveries, ping; outcomes on batch reads. */
let harness: ApiHarness;

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({ name: "hooked", phases: ["first", "second"] });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});

afterAll(async () => {
  await harness?.stop();
});

const post = (body: unknown, token?: string) =>
  harness.request("POST", "/webhooks", {
    body: JSON.stringify(body),
    type: "application/json",
    ...(token === undefined ? {} : { token }),
  });

describe("POST /api/webhooks", () => {
  it("creates a webhook and shows its secret in that response only", async () => {
    const created = await post({
      url: "https://hooks.example.test/matoolkit?team=ops",
      runbookName: "hooked",
      events: ["batch.completed", "member.failed", "batch.completed"],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      url: "https://hooks.example.test/matoolkit?team=ops",
      runbookName: "hooked",
      events: ["batch.completed", "member.failed"],
      enabled: true,
      createdBy: "admin@example.test",
    });
    const secret: string = created.body.secret;
    // 32 random bytes, base64url; stored sealed, never in clear (webhooks.security.test.ts).
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await getWebhookForDelivery(harness.db, created.body.id))?.secret).toMatch(/^v1:/);

    const list = await harness.request("GET", "/webhooks");
    expect(list.status).toBe(200);
    expect(list.body.find((hook: Json) => hook.id === created.body.id)).toMatchObject({
      runbookName: "hooked",
    });
    expect(list.text).not.toContain(secret);
    expect(list.body.every((hook: Json) => !("secret" in hook))).toBe(true);
  });

  it("a global webhook has runbookName null", async () => {
    const created = await post({ url: "http://receiver.example.test:8080/hook", events: ["phase.failed"] });
    expect(created.status).toBe(201);
    expect(created.body.runbookName).toBeNull();
  });

  it.each([
    [{ url: "ftp://example.test/x", events: ["batch.completed"] }, "url"],
    [{ url: "not a url", events: ["batch.completed"] }, "url"],
    [{ url: "https://user:pass@example.test/x", events: ["batch.completed"] }, "url"],
    [{ url: "https://example.test/x", events: [] }, "events"],
    [{ url: "https://example.test/x", events: ["batch.done"] }, "events"],
    [{ url: "https://example.test/x" }, "events"],
    [{ url: "https://example.test/x", events: ["batch.failed"], runbook: "hooked" }, "runbook"],
  ])("refuses %j with a 400 naming %s", async (body, field) => {
    const response = await post(body);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("validation.invalid_input");
    expect(response.text).toContain(field);
  });

  it("404 for a runbook that does not exist; 403 for a non-Admin", async () => {
    const missing = await post({
      url: "https://example.test/x",
      runbookName: "nope",
      events: ["batch.failed"],
    });
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain("nope");
    const reader = await post(
      { url: "https://example.test/x", events: ["batch.failed"] },
      harness.readerToken,
    );
    expect(reader.status).toBe(403);
    expect((await harness.request("GET", "/webhooks", { token: harness.operatorToken })).status).toBe(403);
  });
});

describe("deliveries, ping and delete", () => {
  it("queues a ping as a delivery, pages deliveries, and deletes the webhook (its history stays)", async () => {
    const created = await post({
      url: "https://unreachable.example.test:9/hook",
      events: ["batch.completed"],
    });
    const id: number = created.body.id;
    const pings = [];
    for (let i = 0; i < 3; i += 1) {
      const ping = await harness.request("POST", `/webhooks/${id}/test`);
      expect(ping.status).toBe(202);
      expect(ping.body).toMatchObject({ webhookId: id, notificationId: expect.stringMatching(/^ping:/) });
      pings.push(ping.body.deliveryId as number);
    }
    const first = await harness.request("GET", `/webhooks/${id}/deliveries?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.items.map((item: Json) => item.id)).toEqual(pings.slice(0, 2));
    expect(first.body.items[0]).toMatchObject({ webhookId: id, event: "ping", attempts: expect.any(Array) });
    expect(first.body.nextAfterId).toBe(pings[1]);
    const second = await harness.request("GET", `/webhooks/${id}/deliveries?limit=2&afterId=${pings[1]}`);
    expect(second.body).toEqual({ items: [expect.objectContaining({ id: pings[2] })], nextAfterId: null });

    expect((await harness.request("DELETE", `/webhooks/${id}`)).body).toEqual({ id, deleted: true });
    expect((await harness.request("DELETE", `/webhooks/${id}`)).status).toBe(404);
    expect((await harness.request("GET", `/webhooks/${id}/deliveries`)).status).toBe(200);
    expect((await harness.request("GET", "/webhooks/999999/deliveries")).status).toBe(404);
    expect((await harness.request("POST", `/webhooks/${id}/test`)).status).toBe(404);
  });

  it("400 for a bad id or page", async () => {
    expect((await harness.request("GET", "/webhooks/abc/deliveries")).status).toBe(400);
    const response = await harness.request("GET", "/webhooks/1/deliveries?limit=0");
    expect(response.status).toBe(400);
    expect(response.text).toContain("limit");
  });
});

describe("outcomes on the batch reads", () => {
  async function endedBatch(db: Db): Promise<number> {
    const response = await harness.request("POST", "/batches?runbook=hooked", {
      body: "UserPrincipalName\na@contoso.test\nb@contoso.test\n",
      type: "text/csv",
    });
    const batchId: number = response.body.id;
    const [first, second] = await listPhases(db, batchId);
    await transitionBatch(db, batchId, "activate");
    for (const phase of [first!, second!]) await transitionPhase(db, phase.id, "dispatch");
    await transitionPhase(db, first!.id, "complete", {
      set: { outcome: "partially_succeeded", succeededMembers: 1, failedMembers: 1 },
    });
    await transitionPhase(db, second!.id, "complete", {
      set: { outcome: "succeeded", succeededMembers: 1, failedMembers: 0 },
    });
    await transitionBatch(db, batchId, "complete", {
      set: { outcome: "partially_succeeded", succeededMembers: 1, failedMembers: 1 },
    });
    return batchId;
  }

  it("shows outcome and member counts on the batch, its list item and its phases; null while running", async () => {
    const batchId = await endedBatch(harness.db);
    const detail = await harness.request("GET", `/batches/${batchId}`);
    expect(detail.body).toMatchObject({
      status: "completed",
      outcome: "partially_succeeded",
      succeededMembers: 1,
      failedMembers: 1,
    });
    expect(
      detail.body.phases.map((phase: Json) => [phase.outcome, phase.succeededMembers, phase.failedMembers]),
    ).toEqual([
      ["partially_succeeded", 1, 1],
      ["succeeded", 1, 0],
    ]);
    const list = await harness.request("GET", "/batches?runbook=hooked");
    expect(list.body.find((batch: Json) => batch.id === batchId)).toMatchObject({
      outcome: "partially_succeeded",
      succeededMembers: 1,
      failedMembers: 1,
    });
    const phases = await harness.request("GET", `/batches/${batchId}/phases`);
    expect(phases.body.map((phase: Json) => phase.outcome)).toEqual(["partially_succeeded", "succeeded"]);

    const running = await harness.request("POST", "/batches?runbook=hooked", {
      body: "UserPrincipalName\nc@contoso.test\n",
      type: "text/csv",
    });
    expect(running.body).toMatchObject({ outcome: null, succeededMembers: null, failedMembers: null });
  });
});
