import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TenantCheckReport, TenantCheckRequest } from "@matoolkit/domain";
import { startApiHarness, type ApiHarness } from "../../test/api-test-harness.ts";

/**
 * POST /api/tenant/check: the API reads the runbook and hands every step to the worker's check
 * (the check itself is tested in services/worker/src/tenant/tenant-check.test.ts and, end to end
 * with the simulated tenant, in services/cli/src/tenant-check.e2e.test.ts).
 */
const runbookYaml = `name: wave
data_source:
  type: csv
  path: wave.csv
  primary_key: Email
  batch_time_column: When
init:
  - name: make-group
    worker_id: worker-01
    function: Test-Echo
phases:
  - name: cutover
    offset: T-0
    steps:
      - name: set-upn
        worker_id: worker-01
        function: Set-EntraUserUPN
        params:
          UserId: "{{Email}}"
          NewUserPrincipalName: "{{Alias}}@fabrikam.example"
        on_failure: undo
on_member_removed:
  - name: leave
    worker_id: worker-01
    function: Remove-EntraGroupMember
    params:
      GroupId: g1
      UserId: "{{Email}}"
rollbacks:
  undo:
    - name: restore
      worker_id: worker-01
      function: Set-EntraUserUPN
      params:
        UserId: "{{Email}}"
        NewUserPrincipalName: "{{Email}}"
`;

const requests: TenantCheckRequest[] = [];
const report = (request: TenantCheckRequest): TenantCheckReport => ({
  tenant: "simulated tenant (test)",
  runbook:
    request.runbook === undefined ? null : { name: request.runbook.name, version: request.runbook.version },
  functions: ["Set-EntraUserUPN"],
  passed: false,
  lines: [
    {
      check: "graph.permissions",
      status: "failed",
      detail: "Missing User.ReadWrite.All",
      missing: ["User.ReadWrite.All"],
    },
  ],
  checkedAt: "2026-11-26T00:00:00.000Z",
});

let harness: ApiHarness;
let withoutWorker: ApiHarness;

beforeAll(async () => {
  harness = await startApiHarness({
    tenantChecker: async (request) => {
      requests.push(request);
      return report(request);
    },
  });
  withoutWorker = await startApiHarness();
  expect(
    (await harness.request("POST", "/runbooks", { body: runbookYaml, type: "application/yaml" })).status,
  ).toBe(201);
});

afterAll(async () => {
  await harness?.stop();
  await withoutWorker?.stop();
});

describe("POST /api/tenant/check", () => {
  it("hands the worker every step of the runbook's active version and answers its report", async () => {
    requests.length = 0;
    const response = await harness.request("POST", "/tenant/check?runbook=wave", {
      token: harness.operatorToken,
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(report(requests[0]!));
    expect(requests[0]!.runbook).toEqual({
      name: "wave",
      version: 1,
      steps: [
        { step: "init/make-group", function: "Test-Echo", params: {} },
        {
          step: "cutover/set-upn",
          function: "Set-EntraUserUPN",
          params: { UserId: "{{Email}}", NewUserPrincipalName: "{{Alias}}@fabrikam.example" },
        },
        {
          step: "on_member_removed/leave",
          function: "Remove-EntraGroupMember",
          params: { GroupId: "g1", UserId: "{{Email}}" },
        },
        {
          step: "rollback:undo/restore",
          function: "Set-EntraUserUPN",
          params: { UserId: "{{Email}}", NewUserPrincipalName: "{{Email}}" },
        },
      ],
    });
  });

  it("without a runbook, asks for every standard function", async () => {
    requests.length = 0;
    const response = await harness.request("POST", "/tenant/check", { token: harness.operatorToken });
    expect(response.status).toBe(200);
    expect(requests).toEqual([{}]);
    expect(response.body.runbook).toBeNull();
  });

  it("names an unknown runbook or version, and a version without a runbook", async () => {
    const unknown = await harness.request("POST", "/tenant/check?runbook=nope");
    expect({ status: unknown.status, code: unknown.body.code, detail: unknown.body.detail }).toEqual({
      status: 404,
      code: "resource.not_found",
      detail: "no active runbook named 'nope'",
    });
    const version = await harness.request("POST", "/tenant/check?runbook=wave&version=7");
    expect(version.body.detail).toBe("runbook 'wave' has no version 7");
    const lone = await harness.request("POST", "/tenant/check?version=1");
    expect({ status: lone.status, code: lone.body.code }).toEqual({
      status: 400,
      code: "validation.invalid_input",
    });
  });

  it("needs the Operator role", async () => {
    const response = await harness.request("POST", "/tenant/check", { token: harness.readerToken });
    expect({ status: response.status, code: response.body.code, detail: response.body.detail }).toEqual({
      status: 403,
      code: "auth.forbidden",
      detail: "This operation requires the Operator or Admin role",
    });
  });

  it("answers 503 tenant.check_unavailable in a process that runs no worker", async () => {
    const response = await withoutWorker.request("POST", "/tenant/check", {
      token: withoutWorker.operatorToken,
    });
    expect({ status: response.status, code: response.body.code }).toEqual({
      status: 503,
      code: "tenant.check_unavailable",
    });
    expect(response.body.detail).toMatch(/npm run tenant:check/u);
  });
});
