import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startApiHarness,
  testRunbookYaml,
  type ApiHarness,
  type ApiResponse,
} from "../../test/api-test-harness.ts";

/**
 * The three app roles, each including the one below (issue 12): Reader reads; Operator also runs
 * batches (advance, cancel, members); Admin also changes what runs (publish, deactivate,
 * automation, create batches). A 403 names every role that would have been let in.
 */
let harness: ApiHarness;
const csv = "UserPrincipalName\nadele@contoso.test\nalex@contoso.test\n";

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({ name: "roles", phases: ["first", "second"] });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});

afterAll(async () => {
  await harness?.stop();
});

async function newBatch(): Promise<number> {
  const response = await harness.request("POST", "/batches?runbook=roles", { body: csv, type: "text/csv" });
  expect(response.status).toBe(201);
  return response.body.id;
}

function expectForbidden(response: ApiResponse, roles: string): void {
  expect({ status: response.status, code: response.body?.code }).toEqual({
    status: 403,
    code: "auth.forbidden",
  });
  expect(response.body.detail).toBe(`This operation requires the ${roles} role`);
}

/** The batch-running writes, each against a fresh batch, as `token`. */
function operatorWrites(token: string) {
  return {
    advance: async () => harness.request("POST", `/batches/${await newBatch()}/advance`, { token }),
    cancel: async () => harness.request("POST", `/batches/${await newBatch()}/cancel`, { token }),
    addMembers: async () =>
      harness.request("POST", `/batches/${await newBatch()}/members`, {
        token,
        body: "UserPrincipalName\nmegan@contoso.test\n",
        type: "text/csv",
      }),
    removeMember: async () => {
      const id = await newBatch();
      const members = await harness.request("GET", `/batches/${id}/members`);
      return harness.request("DELETE", `/batches/${id}/members/${members.body[0].id}`, { token });
    },
  };
}

function adminWrites(token: string) {
  return {
    publish: () =>
      harness.request("POST", "/runbooks", {
        token,
        body: testRunbookYaml({ name: "roles-admin" }),
        type: "application/yaml",
      }),
    automation: () =>
      harness.request("PUT", "/runbooks/roles/automation", {
        token,
        body: JSON.stringify({ enabled: true }),
        type: "application/json",
      }),
    createBatch: () =>
      harness.request("POST", "/batches?runbook=roles", { token, body: csv, type: "text/csv" }),
    deactivate: () => harness.request("DELETE", "/runbooks/roles/versions/99", { token }),
  };
}

describe("Reader", () => {
  it("gets 403 on every batch-running write, naming Operator or Admin, and nothing changes", async () => {
    for (const [name, write] of Object.entries(operatorWrites(harness.readerToken))) {
      const response = await write();
      expect(response.status, name).toBe(403);
      expectForbidden(response, "Operator or Admin");
    }
    const batches = await harness.request("GET", "/batches?runbook=roles&limit=1000");
    expect(batches.body.every((batch: { status: string }) => batch.status === "active")).toBe(true);
    const phases = await harness.db.selectFrom("phaseExecutions").select("status").execute();
    expect(new Set(phases.map((phase) => phase.status))).toEqual(new Set(["pending"]));
  });
});

describe("Operator", () => {
  it("advances, cancels, adds and removes members", async () => {
    const writes = operatorWrites(harness.operatorToken);
    expect((await writes.advance()).status).toBe(202);
    expect((await writes.cancel()).status).toBe(200);
    expect((await writes.addMembers()).status).toBe(201);
    expect((await writes.removeMember()).status).toBe(200);
  });

  it("gets 403 naming Admin on publish, automation, deactivate and batch creation, changing nothing", async () => {
    const before = await harness.request("GET", "/batches?limit=1000");
    for (const [name, write] of Object.entries(adminWrites(harness.operatorToken))) {
      const response = await write();
      expect(response.status, name).toBe(403);
      expectForbidden(response, "Admin");
    }
    expect((await harness.request("GET", "/runbooks/roles-admin")).status).toBe(404);
    expect((await harness.request("GET", "/runbooks/roles/automation")).body.automationEnabled).toBe(false);
    expect((await harness.request("GET", "/batches?limit=1000")).body).toEqual(before.body);
  });

  it("reads like a Reader", async () => {
    const response = await harness.request("GET", "/batches", { token: harness.operatorToken });
    expect(response.status).toBe(200);
  });
});

describe("Admin", () => {
  it("can do everything an Operator can, and the Admin writes", async () => {
    const writes = operatorWrites(harness.adminToken);
    expect((await writes.advance()).status).toBe(202);
    expect((await writes.cancel()).status).toBe(200);
    expect((await writes.addMembers()).status).toBe(201);
    expect((await writes.removeMember()).status).toBe(200);
    const admin = adminWrites(harness.adminToken);
    expect((await admin.publish()).status).toBe(201);
    expect((await admin.automation()).status).toBe(200);
    expect((await admin.createBatch()).status).toBe(201);
    // The route ran (past the role check): the version does not exist.
    expect((await admin.deactivate()).status).toBe(404);
  });
});

describe("the OpenAPI document", () => {
  it("lists Operator and Admin for the batch-running writes, only Admin for the rest", async () => {
    const document = (await harness.request("GET", "/openapi.json", { token: null })).body;
    const roles = (path: string, method: string) => document.paths[path][method]["x-required-roles"];
    expect(roles("/api/batches/{id}/advance", "post")).toEqual(["Operator", "Admin"]);
    expect(roles("/api/batches/{id}/cancel", "post")).toEqual(["Operator", "Admin"]);
    expect(roles("/api/batches/{id}/members", "post")).toEqual(["Operator", "Admin"]);
    expect(roles("/api/batches/{id}/members/{memberId}", "delete")).toEqual(["Operator", "Admin"]);
    expect(roles("/api/runbooks", "post")).toEqual(["Admin"]);
    expect(roles("/api/runbooks/{name}/automation", "put")).toEqual(["Admin"]);
    expect(roles("/api/audit", "get")).toEqual(["Reader", "Operator", "Admin"]);
    expect(document.paths["/api/batches/{id}/advance"].post.description).toContain(
      "Needs a bearer token with the Operator or Admin app role.",
    );
  });
});
