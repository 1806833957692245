import { listMembers, listStepsByBatch } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiHarness } from "../../test/api-test-harness.ts";
import { startApiHarness } from "../../test/api-test-harness.ts";
import { adminApiOperations } from "../openapi/admin-api-operations.ts";
import {
  plantedCsv,
  plantedMembers,
  plantedSecrets,
  plantSecretBatch,
  RUNBOOK_NAME,
} from "../../test/routes/planted-secrets.test-support.ts";

/**
 * Issue 25 finding 3: secrets are masked in every read model, for every role. A batch's members
 * carry planted secrets (a column whose name looks secret, one marked `secret_columns`, one only
 * referenced by a param marked `secret_params`); its steps hold them in params, echo them in
 * results, error messages and event reasons. Every read route of the API is walked (from the
 * operation list, so a new route must be added to `urlsOf` or this test fails) as Reader,
 * Operator and Admin, and no answer may hold a planted value.
 */
let harness: ApiHarness;
let batchId: number;

beforeAll(async () => {
  // A simulated tenant that was written the planted values (a step may write any member value).
  harness = await startApiHarness({
    tenantChanges: async () =>
      plantedMembers.map((member, index) => ({
        sequence: index + 1,
        at: "2026-11-26T10:00:00.000Z",
        api: "graph" as const,
        operation: "PATCH /v1.0/users/:id",
        target: member.upn,
        detail: `employeeId="${member.badge}", extensionAttribute1="${member.pin}", onPremisesPassword="${member.password}"`,
      })),
  });
  batchId = await plantSecretBatch(harness);
});

afterAll(async () => {
  await harness?.stop();
});

/** The addresses that read each GET route: every variant whose answer has another shape. */
function urlsOf(routePath: string): readonly string[] | undefined {
  const batch = `/api/batches/${batchId}`;
  const urls: Readonly<Record<string, readonly string[]>> = {
    "/healthz": ["/healthz"],
    "/readyz": ["/readyz"],
    "/problems/{code}": ["/problems/resource.not_found"],
    "/api/openapi.json": ["/api/openapi.json"],
    "/api/auth/config": ["/api/auth/config"],
    "/api/runbooks": ["/api/runbooks"],
    "/api/runbooks/{name}": [`/api/runbooks/${RUNBOOK_NAME}`],
    "/api/runbooks/{name}/versions": [`/api/runbooks/${RUNBOOK_NAME}/versions`],
    "/api/runbooks/{name}/versions/{version}": [`/api/runbooks/${RUNBOOK_NAME}/versions/1`],
    "/api/runbooks/{name}/template": [`/api/runbooks/${RUNBOOK_NAME}/template`],
    "/api/runbooks/{name}/automation": [`/api/runbooks/${RUNBOOK_NAME}/automation`],
    "/api/batches": ["/api/batches", `/api/batches?runbook=${RUNBOOK_NAME}`],
    "/api/members": [`/api/members?key=${plantedMembers[0]!.upn}`],
    "/api/batches/{id}": [batch],
    "/api/batches/{id}/members": [`${batch}/members`, `${batch}/members?limit=1`],
    "/api/batches/{id}/phases": [`${batch}/phases`],
    "/api/batches/{id}/steps": [`${batch}/steps`],
    "/api/batches/{id}/events": [`${batch}/events`, `${batch}/events?limit=1000`],
    "/api/batches/{id}/report.csv": [`${batch}/report.csv`],
    "/api/batches/{id}/grid": [`${batch}/grid`, `${batch}/grid?memberStatus=active`],
    "/api/batches/{id}/progress": [`${batch}/progress`],
    "/api/webhooks": ["/api/webhooks"],
    "/api/webhooks/{id}/deliveries": ["/api/webhooks/1/deliveries"],
    "/api/audit": ["/api/audit", `/api/audit?batchId=${batchId}`],
    "/api/tenant/changes": ["/api/tenant/changes", `/api/tenant/changes?batchId=${batchId}`],
    "/api/worker/pacing": ["/api/worker/pacing"],
    "/api/alerts": ["/api/alerts", "/api/alerts?state=all"],
  };
  return urls[routePath];
}

/** POST routes that only read (nothing is written): they show members' data too. */
function readingPosts(): readonly { path: string; type: string; body: string; roles: readonly Role[] }[] {
  const runbook = `/api/runbooks/${RUNBOOK_NAME}`;
  return [
    { path: `${runbook}/plan`, type: "text/csv", body: plantedCsv(), roles: ["Operator", "Admin"] },
    {
      path: `${runbook}/plan`,
      type: "application/json",
      body: '{"source":true}',
      roles: ["Operator", "Admin"],
    },
    { path: `${runbook}/query/preview`, type: "application/json", body: "{}", roles: ["Admin"] },
  ];
}

async function read(method: string, url: string, token: string, post?: { type: string; body: string }) {
  const response = await fetch(`${harness.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(post ? { "content-type": post.type } : {}) },
    body: post?.body,
  });
  return { status: response.status, text: await response.text() };
}

function leaked(text: string): string[] {
  return plantedSecrets.filter((secret) => text.includes(secret));
}

const roles = ["Reader", "Operator", "Admin"] as const;
type Role = (typeof roles)[number];
const tokenOf = (role: Role) =>
  ({ Reader: harness.readerToken, Operator: harness.operatorToken, Admin: harness.adminToken })[role];

describe("planted secrets on every read route", () => {
  it("every GET operation of the API is walked by this test", () => {
    const unwalked = adminApiOperations()
      .filter((operation) => operation.method === "get")
      .map((operation) => operation.path)
      .filter((routePath) => urlsOf(routePath) === undefined);
    expect(unwalked, "add these routes to urlsOf").toEqual([]);
  });

  it.each(roles)("appear in no answer to a %s", async (role) => {
    const token = tokenOf(role);
    const leaks: string[] = [];
    const answered: Record<string, number> = {};
    for (const operation of adminApiOperations().filter((op) => op.method === "get")) {
      for (const url of urlsOf(operation.path) ?? []) {
        const response = await read("GET", url, token);
        answered[url] = response.status;
        for (const secret of leaked(response.text)) leaks.push(`GET ${url}: ${secret}`);
      }
    }
    for (const post of readingPosts()) {
      const response = await read("POST", post.path, token, post);
      // Answered (the plan, the preview), or refused to a role without access: either way walked.
      expect(response.status, `POST ${post.path} (${post.type})`).toBe(post.roles.includes(role) ? 200 : 403);
      for (const secret of leaked(response.text)) leaks.push(`POST ${post.path} (${post.type}): ${secret}`);
    }
    expect(leaks).toEqual([]);
    // Every read route answered (no 5xx hides a leak), the batch's reads with their data.
    expect(Object.entries(answered).filter(([, status]) => status >= 500)).toEqual([]);
    for (const suffix of ["", "/members", "/steps", "/events", "/report.csv", "/grid"]) {
      expect(answered[`/api/batches/${batchId}${suffix}`], suffix).toBe(200);
    }
    expect(answered[`/api/tenant/changes?batchId=${batchId}`]).toBe(200);
  });
});

describe("what is masked and what is kept", () => {
  it("masks secret columns and echoed values but keeps the rest of the member's data", async () => {
    const members = await harness.request("GET", `/batches/${batchId}/members`, {
      token: harness.readerToken,
    });
    const [first] = plantedMembers;
    expect(members.body[0].memberKey).toBe(first!.upn);
    expect(members.body[0].dataJson).toEqual({
      UserPrincipalName: first!.upn,
      InitialPassword: "***",
      Badge: "***",
      Pin: "***",
    });
    expect(members.body[0].workerDataJson).toEqual({ IssuedTo: `${first!.upn} with ***` });
  });

  it("masks params by name, marker and template, and the member's secret values in results", async () => {
    const steps = await harness.request("GET", `/batches/${batchId}/steps`, { token: harness.readerToken });
    const [succeeded, failed] = steps.body.steps;
    const [first] = plantedMembers;
    expect(succeeded.paramsJson).toEqual({
      UserPrincipalName: first!.upn,
      Password: "***",
      Note: "***",
      Args: "***",
    });
    expect(succeeded.resultJson).toEqual({
      issuedTo: `${first!.upn} with ***`,
      echo: { values: ["***", "pin=***"] },
    });
    // "badge <Badge>" is the whole value of the masked Note param: masked as a whole.
    expect(failed.errorMessage).toBe("password *** refused for ***");
  });

  it("never alters what is stored for execution", async () => {
    const [first] = plantedMembers;
    const [member] = await listMembers(harness.db, batchId);
    expect(member!.dataJson).toMatchObject({ InitialPassword: first!.password, Badge: first!.badge });
    const [step] = await listStepsByBatch(harness.db, batchId, { limit: 1, offset: 0 });
    expect(step!.paramsJson).toMatchObject({ Password: first!.password, Args: `-code ${first!.pin}` });
  });
});
