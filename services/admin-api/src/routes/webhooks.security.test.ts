import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

/**
 * Issue 25, findings 2, 7 and 8 at the API: webhook URLs are checked against the outbound
 * policy at registration (refused with the reason), every webhook write leaves an audit row,
 * removal is a tombstone that keeps the delivery history, and the secret is stored sealed.
 * Host names resolve through the harness's test resolver (api-test-harness.ts): nothing here
 * connects anywhere.
 */
let harness: ApiHarness;

beforeAll(async () => {
  harness = await startApiHarness();
});

afterAll(async () => {
  await harness?.stop();
});

const register = (url: string) =>
  harness.request("POST", "/webhooks", {
    body: JSON.stringify({ url, events: ["batch.completed"] }),
    type: "application/json",
  });

describe("registration under the outbound policy", () => {
  it.each([
    ["http://127.0.0.1/hook", "address 127.0.0.1 is loopback"],
    ["http://localhost:8080/hook", "address 127.0.0.1 (of localhost) is loopback"],
    ["http://[::1]/hook", "address ::1 is loopback"],
    ["http://0.0.0.0/hook", "address 0.0.0.0 is unspecified"],
    ["http://2130706433/hook", "address 127.0.0.1 is loopback"],
    ["http://0177.0.0.1/hook", "address 127.0.0.1 is loopback"],
    ["http://0x7f.1/hook", "address 127.0.0.1 is loopback"],
    ["http://169.254.169.254/latest/meta-data", "address 169.254.169.254 is link-local (cloud metadata)"],
    ["http://[::ffff:127.0.0.1]/hook", "address ::ffff:7f00:1 is IPv4-mapped IPv6"],
    ["http://10.0.0.1/hook", "address 10.0.0.1 is private"],
    ["http://100.64.0.1/hook", "address 100.64.0.1 is carrier-grade NAT"],
    ["http://[fd00::1]/hook", "address fd00::1 is unique-local"],
    ["http://[64:ff9b::a00:1]/hook", "address 64:ff9b::a00:1 is IPv4/IPv6 translation"],
    ["http://224.0.0.1/hook", "address 224.0.0.1 is multicast"],
  ])("refuses %s with a 400 naming the reason", async (url, reason) => {
    const response = await register(url);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("validation.invalid_input");
    expect(response.body.detail).toContain(reason);
    const privateKind = !/unspecified|multicast/u.test(reason);
    if (privateKind)
      expect(response.body.detail).toContain("set MATOOLKIT_WEBHOOK_ALLOWED_HOSTS to allow it");
  });

  it("accepts a host name that resolves to a public address", async () => {
    const response = await register("https://hooks.example.test/matoolkit");
    expect(response.status).toBe(201);
  });

  it("stores nothing for a refused URL", async () => {
    await register("http://127.0.0.1:9/refused-and-not-stored");
    const rows = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM webhooks WHERE url LIKE '%refused-and-not-stored'`.execute(harness.db);
    expect(rows.rows[0]!.n).toBe(0);
  });
});

describe("the secret at rest", () => {
  it("is never stored in clear: the column holds the sealed v1 value", async () => {
    const created = await register("https://hooks.example.test/sealed");
    expect(created.status).toBe(201);
    const secret: string = created.body.secret;
    const stored = await sql<{
      secret: string;
    }>`SELECT secret FROM webhooks WHERE id = ${created.body.id}`.execute(harness.db);
    const value = stored.rows[0]!.secret;
    expect(value).not.toBe(secret);
    expect(value).not.toContain(secret);
    expect(value).toMatch(/^v1:[0-9a-f]{16}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]+$/u);
  });
});

describe("audit rows and the tombstone", () => {
  async function auditOf(id: number): Promise<Json> {
    const page = await harness.request("GET", "/audit?limit=500");
    expect(page.status).toBe(200);
    const items: Json[] = Array.isArray(page.body) ? page.body : page.body.items;
    return items
      .filter((row) => row.entity === "webhook" && row.entityId === id)
      .map((row) => [row.fromStatus, row.toStatus, row.actor]);
  }

  it("create, ping and delete each write an audit row; delete keeps the row and its deliveries", async () => {
    const created = await register("https://hooks.example.test/audited?token=not-in-audit");
    const id: number = created.body.id;
    const ping = await harness.request("POST", `/webhooks/${id}/test`);
    expect(ping.status).toBe(202);
    expect((await harness.request("DELETE", `/webhooks/${id}`)).status).toBe(200);

    expect(await auditOf(id)).toEqual([
      [null, "active", "admin@example.test"],
      ["active", "active", "admin@example.test"],
      ["active", "deleted", "admin@example.test"],
    ]);
    // The audit trail is readable by Readers: it never carries the URL (a token may be in it).
    const audit = await harness.request("GET", "/audit?limit=500", { token: harness.readerToken });
    expect(audit.text).not.toContain("not-in-audit");

    // A tombstone: hidden from the list, no new ping, but the row and its history remain.
    const list = await harness.request("GET", "/webhooks");
    expect(list.body.map((hook: Json) => hook.id)).not.toContain(id);
    expect((await harness.request("POST", `/webhooks/${id}/test`)).status).toBe(404);
    expect((await harness.request("DELETE", `/webhooks/${id}`)).status).toBe(404);
    const row = await sql<{
      deleted_by: string | null;
    }>`SELECT deleted_by FROM webhooks WHERE id = ${id}`.execute(harness.db);
    expect(row.rows).toEqual([{ deleted_by: "admin@example.test" }]);
    const history = await harness.request("GET", `/webhooks/${id}/deliveries`);
    expect(history.status).toBe(200);
    expect(history.body.items).toEqual([
      expect.objectContaining({ id: ping.body.deliveryId, event: "ping", status: "gave_up" }),
    ]);
  });
});
