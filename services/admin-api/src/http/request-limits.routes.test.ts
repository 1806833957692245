import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";

/**
 * Issue 25, finding 4: a member upload's bytes and rows are capped per route, and the answer
 * names the value, the limit and the setting (not body-parser's bare "request entity too large").
 * Small limits here (the same code as the defaults: 20 MB, 100,000 rows).
 */
let harness: ApiHarness;
const runbook = "limits";
const limits = { memberUploadBytes: 2000, memberRows: 5, heavyPerCaller: 1, heavyTotal: 4 };
let batchId: number;

beforeAll(async () => {
  harness = await startApiHarness({ requestLimits: limits });
  const published = await harness.request("POST", "/runbooks", {
    body: testRunbookYaml({ name: runbook }),
    type: "application/yaml",
  });
  expect(published.status).toBe(201);
  const created = await harness.request("POST", `/batches?runbook=${runbook}`, {
    body: csvOf(1),
    type: "text/csv",
  });
  expect(created.status).toBe(201);
  batchId = created.body.id;
});

afterAll(async () => {
  await harness?.stop();
});

function csvOf(rows: number, from = 0): string {
  const lines = Array.from(
    { length: rows },
    (_, i) => `user${from + i}@contoso.test,smtp:a${i}@contoso.test`,
  );
  return `UserPrincipalName,ProxyAddresses\n${lines.join("\n")}\n`;
}

const uploads = () => [
  { route: "POST /api/runbooks/{name}/plan", path: `/runbooks/${runbook}/plan` },
  { route: "POST /api/batches", path: `/batches?runbook=${runbook}` },
  { route: "POST /api/batches/{id}/members", path: `/batches/${batchId}/members` },
];

describe("member upload limits", () => {
  it.each(["plan", "create", "add"])("answers 413 naming size, limit and setting (%s)", async (which) => {
    const { route, path } = uploads()[["plan", "create", "add"].indexOf(which)]!;
    const body = `UserPrincipalName,ProxyAddresses\n${"x".repeat(3000)}@contoso.test,a\n`;
    const response = await harness.request("POST", path, { body, type: "text/csv" });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe("payload.too_large");
    expect(response.body.detail).toBe(
      `The body is 3 kB (${body.length.toLocaleString("en-US")} bytes); the limit for ${route} is ` +
        "2 kB (MATOOLKIT_MAX_MEMBER_UPLOAD_BYTES)",
    );
    expect(response.text).not.toContain("xxxx");
  });

  it("answers 413 for a chunked body (no Content-Length) once it passes the limit", async () => {
    const chunk = new TextEncoder().encode(`${"y".repeat(1000)}\n`);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 5; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const response = await fetch(`${harness.url}/api/runbooks/${runbook}/plan`, {
      method: "POST",
      headers: { authorization: `Bearer ${harness.adminToken}`, "content-type": "text/csv" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { detail: string }).detail).toBe(
      "The body is larger than the limit; the limit for POST /api/runbooks/{name}/plan is 2 kB " +
        "(MATOOLKIT_MAX_MEMBER_UPLOAD_BYTES)",
    );
  });

  it.each(["plan", "create", "add"])(
    "answers 400 for more rows than the limit, counting them (%s)",
    async (which) => {
      const { route, path } = uploads()[["plan", "create", "add"].indexOf(which)]!;
      const response = await harness.request("POST", path, { body: csvOf(7, 100), type: "text/csv" });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe("member_data.too_many_rows");
      expect(response.body.detail).toBe(
        `The upload has 7 member rows; the limit for ${route} is 5 (MATOOLKIT_MAX_MEMBER_ROWS). ` +
          "Split it into several uploads.",
      );
    },
  );

  it("counts JSON member rows against the same limit", async () => {
    const members = Array.from({ length: 6 }, (_, i) => ({ UserPrincipalName: `json${i}@contoso.test` }));
    const response = await harness.request("POST", `/batches/${batchId}/members`, {
      body: JSON.stringify({ members }),
      type: "application/json",
    });
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(
      /^The upload has 6 member rows; the limit for POST \/api\/batches\/\{id\}\/members is 5/,
    );
  });

  it("takes an upload at the limit", async () => {
    const response = await harness.request("POST", `/runbooks/${runbook}/plan`, {
      body: csvOf(5),
      type: "text/csv",
    });
    expect(response.status).toBe(200);
    expect(response.body.memberCount).toBe(5);
  });

  it("keeps the fixed limit of other bodies (a runbook: 1 MB), naming it", async () => {
    const response = await harness.request("POST", "/runbooks", {
      body: `# ${"z".repeat(1024 * 1024)}\n${testRunbookYaml({ name: "big" })}`,
      type: "application/yaml",
    });
    expect(response.status).toBe(413);
    expect(response.body.detail).toMatch(
      /^The body is 1 MB \([\d,]+ bytes\); the limit for POST \/api\/runbooks is 1 MB$/,
    );
  });
});

describe("heavy routes", () => {
  it("refuses a second plan of a caller allowed one while the first is still being sent (429, Retry-After)", async () => {
    // The first plan's body stays open: it holds the caller's only slot until the test ends it.
    // It goes on a connection of its own (node:http, no agent), not on fetch's shared pool.
    // Until the server has taken its slot, a probing plan can take it first and the held one is
    // refused instead (under CI load every probe then got 200): a held plan refused so is sent
    // again, and the probes go on until one is refused, bounded by time.
    let held = holdOpenPlan(harness.operatorToken);
    const giveUpAt = Date.now() + 20_000;
    let second: Awaited<ReturnType<ApiHarness["request"]>>;
    for (;;) {
      const outcome = await Promise.race([
        harness.request("POST", `/runbooks/${runbook}/plan`, {
          token: harness.operatorToken,
          body: csvOf(1),
          type: "text/csv",
        }),
        held.answeredEarly,
      ]);
      if ("heldStatus" in outcome) {
        expect(outcome.heldStatus, "the held plan, answered before its body ended").toBe(429);
        held = holdOpenPlan(harness.operatorToken);
      } else {
        second = outcome;
        if (second.status !== 200) break;
      }
      expect(Date.now(), "no plan refused while the held one was open, within 20 s").toBeLessThan(giveUpAt);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(second.status).toBe(429);
    expect(second.headers.get("retry-after")).toBe("5");
    expect(second.body.code).toBe("request.too_many_in_flight");
    expect(second.body.detail).toMatch(/MATOOLKIT_HEAVY_REQUESTS_PER_CALLER/);
    // Another caller (the Admin token) is not held back by the Operator's plan.
    const admin = await harness.request("POST", `/runbooks/${runbook}/plan`, {
      body: csvOf(1),
      type: "text/csv",
    });
    expect(admin.status).toBe(200);
    expect(await held.finish("held@contoso.test,a\n")).toBe(200);
  }, 60_000);
});

/**
 * A plan whose CSV body is sent in two parts, on a fresh connection: the header row now, the rest
 * on `finish`. `answeredEarly` settles if the server answers (or the request fails) before that.
 */
function holdOpenPlan(token: string): {
  answeredEarly: Promise<{ heldStatus: number }>;
  finish(rest: string): Promise<number>;
} {
  const request = http.request(`${harness.url}/api/runbooks/${runbook}/plan`, {
    method: "POST",
    agent: false,
    headers: { authorization: `Bearer ${token}`, "content-type": "text/csv" },
  });
  const answered = new Promise<number>((resolve, reject) => {
    request.once("response", (response) => {
      response.resume();
      response.once("end", () => resolve(response.statusCode ?? 0));
    });
    request.once("error", reject);
  });
  let finished = false;
  const answeredEarly = answered.then((status) => {
    if (finished) return new Promise<never>(() => undefined);
    request.destroy();
    return { heldStatus: status };
  });
  answeredEarly.catch(() => undefined);
  request.write("UserPrincipalName,ProxyAddresses\n");
  return {
    answeredEarly,
    finish(rest) {
      finished = true;
      request.end(rest);
      return answered;
    },
  };
}
