import type { AddressInfo } from "node:net";
import { createLogger } from "@matoolkit/runtime";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startApiHarness,
  testRunbookYaml,
  type ApiHarness,
  type ApiResponse,
} from "../../test/api-test-harness.ts";
import { errorHandler } from "./api-error.ts";
import { problemDetailsSchema } from "./problem-details.ts";
import { problemCodes, problemTypes } from "./problem-types.ts";

/**
 * RFC 9457: every error path answers `application/problem+json` with type, title, status,
 * detail and the stable code, the title and type fixed per code (problem-types.ts).
 */
let harness: ApiHarness;

beforeAll(async () => {
  harness = await startApiHarness();
});

afterAll(async () => {
  await harness?.stop();
});

function expectProblem(response: ApiResponse, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  const problem = problemDetailsSchema.parse(response.body);
  expect(problem).toMatchObject({ status, code, type: `/problems/${code}` });
  expect(problem.title).toBe(problemTypes[problem.code].title);
  expect(problem.detail).not.toBe("");
  expect(response.body).not.toHaveProperty("error");
  return problem;
}

describe("problem details on every error path", () => {
  it("an ApiError: code, detail, and the runbook's problems as an extension member", async () => {
    const response = await harness.request("POST", "/runbooks", {
      body: "name: broken\nphases: nope\n",
      type: "application/yaml",
    });
    const problem = expectProblem(response, 400, "runbook.invalid");
    expect(problem.detail).toMatch(/^Runbook has \d+ problem/);
    expect(problem.problems?.length).toBeGreaterThan(0);
    expect(problem.problems?.[0]).toMatchObject({ line: expect.any(Number), path: expect.any(String) });
    expect(response.body).not.toHaveProperty("details");
  });

  it("a missing resource", async () => {
    const problem = expectProblem(
      await harness.request("GET", "/batches/2147483647"),
      404,
      "resource.not_found",
    );
    expect(problem.detail).toBe("batch 2147483647 does not exist");
  });

  it("a bad parameter names it, in detail and in problems", async () => {
    const response = await harness.request("GET", "/batches?limit=0&offset=x");
    const problem = expectProblem(response, 400, "validation.invalid_input");
    expect(problem.detail).toBe("'limit' must be between 1 and 1000; 'offset' must be a whole number");
    expect(problem.problems?.map((item) => item.path)).toEqual(["limit", "offset"]);
  });

  it("malformed JSON (body-parser)", async () => {
    const response = await harness.request("PUT", "/runbooks/x/automation", {
      body: '{"enabled": tru',
      type: "application/json",
    });
    expectProblem(response, 400, "validation.invalid_input");
  });

  it("a body over the endpoint's limit (413)", async () => {
    const response = await harness.request("PUT", "/runbooks/x/automation", {
      body: JSON.stringify({ enabled: true, padding: "x".repeat(20_000) }),
      type: "application/json",
    });
    expectProblem(response, 413, "payload.too_large");
  });

  it("an unsupported charset (415)", async () => {
    const response = await harness.request("PUT", "/runbooks/x/automation", {
      body: '{"enabled": true}',
      type: "application/json; charset=latin1",
    });
    expectProblem(response, 415, "payload.unsupported");
  });

  it("no such route, inside and outside /api", async () => {
    expectProblem(await harness.request("GET", "/no-such-thing"), 404, "resource.not_found");
    // A GET outside /api is the dashboard's (dashboard-static.test.ts); anything else is not found.
    const outside = await fetch(`${harness.url}/nothing-here`, { method: "POST" });
    expect(outside.status).toBe(404);
    expect(outside.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(problemDetailsSchema.parse(await outside.json()).code).toBe("resource.not_found");
  });

  it("401 keeps its WWW-Authenticate challenge; 403 for a Reader's write", async () => {
    const anonymous = await harness.request("GET", "/runbooks", { token: null });
    expectProblem(anonymous, 401, "auth.unauthenticated");
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
    const reader = await harness.request("POST", "/runbooks", {
      token: harness.readerToken,
      body: testRunbookYaml({ name: "reader-write" }),
      type: "application/yaml",
    });
    expectProblem(reader, 403, "auth.forbidden");
  });

  it("500 says only that it failed, never the error itself", async () => {
    const app = express();
    app.get("/boom", () => {
      throw new Error("password=hunter2 at db.internal:5432");
    });
    app.use(errorHandler(createLogger({ level: "silent", name: "problem-test" })));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/boom`);
      const text = await response.text();
      expectProblem(
        { status: response.status, body: JSON.parse(text), text, headers: response.headers },
        500,
        "unexpected.exception",
      );
      expect(text).not.toContain("hunter2");
      expect(text).not.toContain("db.internal");
    } finally {
      server.close();
    }
  });
});

describe("GET /problems/{code}: what a problem's type resolves to", () => {
  it.each(problemCodes)("explains %s without a token", async (code) => {
    const response = await fetch(new URL(`/problems/${code}`, harness.url));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await response.text();
    expect(text).toContain(problemTypes[code].title);
    expect(text).toContain(`HTTP ${problemTypes[code].statuses[0]}`);
  });

  it("answers an unknown code with a 404 problem", async () => {
    const response = await fetch(new URL("/problems/no.such_code", harness.url));
    expect(response.status).toBe(404);
    expect(((await response.json()) as { detail: string }).detail).toContain("'no.such_code'");
  });
});
