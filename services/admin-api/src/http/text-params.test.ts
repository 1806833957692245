import { afterAll, beforeAll, describe, expect, it } from "vitest";
import express from "express";
import type { AddressInfo } from "node:net";
import { sql } from "kysely";
import { createLogger } from "@matoolkit/runtime";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";
import { errorHandler } from "./api-error.ts";

/**
 * Issue 11: `%00` in a path or query parameter decodes to U+0000, which PostgreSQL refuses
 * (SQLSTATE 22021): the request answered 500. Parameters are checked at the boundary and
 * refused with a 400 that names the parameter; what slips through is still the caller's
 * mistake (a 400), and no answer repeats the value.
 */
let harness: ApiHarness;
const runbook = "text-params";

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({ name: runbook });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});
afterAll(async () => {
  await harness?.stop();
});

const csv = "UserPrincipalName,ProxyAddresses,DisplayName\nalex@contoso.test,smtp:alex@contoso.test,Alex\n";

describe("a NUL in a text parameter", () => {
  it.each([
    ["GET", "/batches?runbook=%00", "runbook"],
    ["POST", "/batches?runbook=text%00params", "runbook"],
    ["GET", `/runbooks/${runbook}%00`, "name"],
    ["GET", "/runbooks/%00/versions", "name"],
    ["GET", "/runbooks/%00/versions/1", "name"],
    ["DELETE", "/runbooks/%00/versions/1", "name"],
    ["GET", "/runbooks/%00/template", "name"],
    ["GET", "/runbooks/%00/automation", "name"],
    ["PUT", "/runbooks/%00/automation", "name"],
    ["POST", "/runbooks/%00/query/preview", "name"],
  ])("%s %s answers 400 naming '%s'", async (method, apiPath, parameter) => {
    const body = method === "POST" && apiPath.startsWith("/batches") ? csv : undefined;
    const response = await harness.request(method, apiPath, {
      body: body ?? (method === "PUT" ? '{"enabled":true}' : undefined),
      type: body === undefined ? "application/json" : "text/csv",
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: "validation.invalid_input" });
    expect(response.body.problems).toContainEqual({
      path: parameter,
      message: "must not contain NUL (U+0000) or unpaired surrogate characters",
    });
    expect(response.text).not.toContain("\\u0000");
  });

  it("answers 400 on the public problem-type page too", async () => {
    const response = await fetch(`${harness.url}/problems/state.conflict%00`);
    expect(response.status).toBe(400);
  });
});

describe("a path segment that is not UTF-8", () => {
  it.each(["%FF", "%ED%A0%80", "%C0%80"])(
    "/runbooks/%s answers 400 without repeating it",
    async (segment) => {
      const response = await harness.request("GET", `/runbooks/${segment}`);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        code: "validation.invalid_input",
        detail: "A path parameter is not valid percent-encoded UTF-8",
      });
      expect(response.text).not.toContain(segment);
    },
  );
});

describe("text PostgreSQL refuses past the schemas (the error handler's backstop)", () => {
  it("answers 400 validation.invalid_input without the value, for SQLSTATE 22021 and 22P05", async () => {
    // A route that hands PostgreSQL what a schema might have missed, with the real driver error.
    const app = express();
    app.get("/text", async () => {
      await sql`SELECT ${"secret\u0000value"}::text`.execute(harness.db);
    });
    app.get("/jsonb", async () => {
      await sql`SELECT ${JSON.stringify({ note: "secret\u0000value" })}::jsonb`.execute(harness.db);
    });
    app.use(errorHandler(createLogger({ level: "silent", name: "text-params-test" })));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      for (const route of ["/text", "/jsonb"]) {
        const response = await fetch(`http://127.0.0.1:${port}${route}`);
        const text = await response.text();
        expect(response.status, route).toBe(400);
        expect(JSON.parse(text), route).toMatchObject({ code: "validation.invalid_input" });
        expect(text, route).not.toContain("secret");
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
