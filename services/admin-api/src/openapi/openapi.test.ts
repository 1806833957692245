import { Validator } from "@seriousme/openapi-schema-validator";
import { createDataSourceClient } from "@matoolkit/datasources";
import {
  insertInits,
  insertSteps,
  listInitsByBatch,
  listMembers,
  listPhases,
  listStepsByBatch,
  recordRollbackStep,
  transitionInit,
  transitionStep,
} from "@matoolkit/db";
import { createLogger } from "@matoolkit/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";
import { createAdminApi } from "../app.ts";
import { createReadiness } from "../http/readiness.ts";
import { adminApiOperations } from "./admin-api-operations.ts";
import { listExpressRoutes } from "./express-routes.ts";
import type { OpenApiDocument } from "./openapi-document.ts";

/**
 * The OpenAPI 3.1 document is generated from the operation registry app.ts mounts. These tests
 * hold the two together: the document is valid, describes exactly the routes express serves,
 * and the response schemas it shows accept real responses, field for field.
 */
let harness: ApiHarness;
let document: OpenApiDocument;

beforeAll(async () => {
  harness = await startApiHarness();
  const response = await fetch(new URL("/api/openapi.json", harness.url));
  expect(response.status).toBe(200);
  document = (await response.json()) as OpenApiDocument;
});

afterAll(async () => {
  await harness?.stop();
});

describe("GET /api/openapi.json", () => {
  it("is served without a token and validates as OpenAPI 3.1", async () => {
    expect(document.openapi).toBe("3.1.0");
    const validator = new Validator();
    const result = await validator.validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("describes exactly the routes the app serves (a route outside the registry fails here)", () => {
    const app = createAdminApi({
      db: harness.db,
      bus: harness.runtime.bus,
      verifier: { verify: () => Promise.reject(new Error("unused")) },
      logger: createLogger({ level: "silent", name: "openapi-test" }),
      dataSources: createDataSourceClient({ env: {}, baseDir: harness.dataDir }),
      readiness: createReadiness({
        db: harness.db,
        busReady: Promise.resolve(),
        logger: createLogger({ level: "silent", name: "x" }),
      }),
    });
    const described = Object.entries(document.paths)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    const routed = listExpressRoutes(app);
    expect({ undescribed: routed.filter((route) => !described.includes(route)) }).toEqual({
      undescribed: [],
    });
    expect({ unrouted: described.filter((route) => !routed.includes(route)) }).toEqual({ unrouted: [] });
  });

  it("requires the bearer token and names the role on every /api operation but itself", () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item) as [string, Json][]) {
        const isPublic =
          !path.startsWith("/api/") || path === "/api/openapi.json" || path === "/api/auth/config";
        expect(operation.security, `${method} ${path}`).toEqual(isPublic ? [] : [{ bearerAuth: [] }]);
        if (!isPublic) expect(operation["x-required-roles"].length, `${method} ${path}`).toBeGreaterThan(0);
      }
    }
    expect(document.paths["/api/batches"]!.post).toMatchObject({ "x-required-roles": ["Admin"] });
  });

  it("describes parameters as what they mean and lists each error code a route answers with", () => {
    const list: Json = document.paths["/api/batches"]!.get;
    expect(list.parameters.find((parameter: Json) => parameter.name === "limit")).toMatchObject({
      in: "query",
      required: false,
      schema: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
    });
    const members: Json = document.paths["/api/batches/{id}/members"]!.get;
    expect(members.parameters.find((parameter: Json) => parameter.name === "limit")).toMatchObject({
      in: "query",
      required: false,
      schema: { type: "integer", minimum: 1, maximum: 1000 },
    });
    expect(members.responses["200"].headers.Link).toMatchObject({ schema: { type: "string" } });
    expect(members.description).toContain('rel="next"');
    const advance: Json = document.paths["/api/batches/{id}/advance"]!.post;
    expect(advance.responses["409"].content["application/problem+json"].schema.allOf[1]).toEqual({
      properties: { code: { enum: ["idempotency.in_progress", "state.conflict"] }, status: { const: 409 } },
    });
    expect(Object.keys(advance.responses)).toEqual([
      "202",
      "400",
      "401",
      "403",
      "404",
      "409",
      "422",
      "500",
      "503",
    ]);
    // Every POST that writes takes an Idempotency-Key; the query preview (writes nothing) does not.
    expect(advance.parameters).toContainEqual(
      expect.objectContaining({ name: "Idempotency-Key", in: "header", required: false }),
    );
    const preview: Json = document.paths["/api/runbooks/{name}/query/preview"]!.post;
    expect(preview.parameters.map((parameter: Json) => parameter.name)).not.toContain("Idempotency-Key");
    expect(advance["x-required-roles"]).toEqual(["Operator", "Admin"]);
  });
});

/** A failed init and a failed step, each with the rollback the orchestrator would record. */
async function failedExecutionsWithRollbacks(batchId: number) {
  const [phase] = await listPhases(harness.db, batchId);
  const [member] = await listMembers(harness.db, batchId);
  const execution = { batchId, stepIndex: 0, workerId: "w", functionName: "F", onFailure: "undo" };
  await insertInits(harness.db, [{ ...execution, runbookVersion: 1, stepName: "group" }]);
  await insertSteps(harness.db, [
    { ...execution, phaseExecutionId: phase!.id, batchMemberId: member!.id, stepName: "move" },
  ]);
  const [init] = await listInitsByBatch(harness.db, batchId);
  const [step] = await listStepsByBatch(harness.db, batchId, { limit: 1, offset: 0 });
  for (const event of ["dispatch", "fail"] as const) {
    await transitionInit(harness.db, init!.id, event);
    await transitionStep(harness.db, step!.id, event);
  }
  const rollback = { batchId, executionStatus: "failed", sequence: "undo", index: 0, total: 1 } as const;
  await recordRollbackStep(harness.db, {
    ...rollback,
    entity: "init",
    executionId: init!.id,
    stepName: "ungroup",
    outcome: { sent: false, reason: "template.unresolved" },
  });
  await recordRollbackStep(harness.db, {
    ...rollback,
    entity: "step",
    executionId: step!.id,
    stepName: "restore",
    outcome: { sent: true, jobId: `rollback-${step!.id}` },
  });
}

/** The registry's response schema of `METHOD path` for `status`: the one the document shows. */
function responseSchema(method: string, path: string, status: 200 | 201 | 202): z.ZodType {
  const operation = adminApiOperations().find((op) => op.method === method && op.path === path);
  const schema = operation?.responses[status]?.schema;
  if (schema === undefined) throw new Error(`no ${status} response for ${method} ${path}`);
  return schema;
}

/**
 * The body decodes with the schema (every documented field present and well-formed), and
 * encoding it back gives the body again: no field the schema does not document.
 */
function expectDocumented(
  method: string,
  path: string,
  status: 200 | 201 | 202,
  response: { status: number; body: Json },
) {
  expect(response.status).toBe(status);
  const schema = responseSchema(method, path, status);
  expect(z.encode(schema, schema.parse(response.body))).toEqual(response.body);
}

describe("real responses match the documented schemas", () => {
  it("runbooks and automation", async () => {
    const yaml = testRunbookYaml({ name: "documented", initWorkerId: "init-pool" });
    const published = await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" });
    expectDocumented("post", "/api/runbooks", 201, published);
    expectDocumented("get", "/api/runbooks", 200, await harness.request("GET", "/runbooks"));
    expectDocumented(
      "get",
      "/api/runbooks/{name}",
      200,
      await harness.request("GET", "/runbooks/documented"),
    );
    expectDocumented(
      "get",
      "/api/runbooks/{name}/versions",
      200,
      await harness.request("GET", "/runbooks/documented/versions"),
    );
    expectDocumented(
      "get",
      "/api/runbooks/{name}/versions/{version}",
      200,
      await harness.request("GET", "/runbooks/documented/versions/1"),
    );
    const switched = await harness.request("PUT", "/runbooks/documented/automation", {
      body: JSON.stringify({ enabled: true }),
      type: "application/json",
    });
    expectDocumented("put", "/api/runbooks/{name}/automation", 200, switched);
    expectDocumented(
      "get",
      "/api/runbooks/{name}/automation",
      200,
      await harness.request("GET", "/runbooks/documented/automation"),
    );
  });

  it("a manual batch from creation through advance and its read models", async () => {
    const created = await harness.request("POST", "/batches?runbook=documented", {
      body: "UserPrincipalName,ProxyAddresses\nadele@contoso.test,smtp:a@contoso.test;smtp:b@contoso.test\n",
      type: "text/csv",
    });
    expectDocumented("post", "/api/batches", 201, created);
    const id = created.body.id as number;
    expectDocumented(
      "post",
      "/api/batches/{id}/advance",
      202,
      await harness.request("POST", `/batches/${id}/advance`),
    );
    expectDocumented("get", "/api/batches", 200, await harness.request("GET", "/batches?runbook=documented"));
    expectDocumented("get", "/api/batches/{id}", 200, await harness.request("GET", `/batches/${id}`));
    expectDocumented(
      "get",
      "/api/batches/{id}/members",
      200,
      await harness.request("GET", `/batches/${id}/members`),
    );
    const memberPage = await harness.request("GET", `/batches/${id}/members?limit=1&afterId=0`);
    expectDocumented("get", "/api/batches/{id}/members", 200, memberPage);
    expect(memberPage.headers.get("link")).toBeNull();
    expectDocumented(
      "get",
      "/api/batches/{id}/phases",
      200,
      await harness.request("GET", `/batches/${id}/phases`),
    );
    await failedExecutionsWithRollbacks(id);
    const steps = await harness.request("GET", `/batches/${id}/steps`);
    expect(steps.body.init[0].rollback).not.toBeNull();
    expect(steps.body.steps[0].rollback).not.toBeNull();
    expectDocumented("get", "/api/batches/{id}/steps", 200, steps);
    const events = await harness.request("GET", `/batches/${id}/events`);
    expect(events.body.items.length).toBeGreaterThan(0);
    expectDocumented("get", "/api/batches/{id}/events", 200, events);
    expectDocumented(
      "post",
      "/api/batches/{id}/cancel",
      200,
      await harness.request("POST", `/batches/${id}/cancel`),
    );
  });

  it("health", async () => {
    for (const path of ["/healthz", "/readyz"] as const) {
      const response = await fetch(new URL(path, harness.url));
      expectDocumented("get", path, 200, { status: response.status, body: await response.json() });
    }
  });
});
