import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";
import { expectDocumentedBody } from "../../test/routes/batch-members.test-support.ts";
import { maskSecretProperties, tenantChangeSchema, type TenantChange } from "./tenant-changes.routes.ts";
import { z } from "zod";

/**
 * GET /api/tenant/changes: the simulated tenant's write log, each change with the batch member it
 * is about (matched on the UPNs and addresses of the member's data), secret-looking values masked.
 */
const at = "2026-11-26T10:00:00.000Z";
const change = (sequence: number, rest: Omit<TenantChange, "sequence" | "at">): TenantChange => ({
  sequence,
  at,
  ...rest,
});
const log: TenantChange[] = [
  change(1, {
    api: "graph",
    operation: "DELETE /v1.0/groups/:id/members/:memberId/$ref",
    target: "Wave 1",
    detail: "removed member isaiah.staging@fabrikam.test",
  }),
  change(2, {
    api: "exchange",
    operation: "Set-MailUser",
    target: "adele.staging",
    detail: 'ExternalEmailAddress="SMTP:adele@contoso.test"',
  }),
  change(3, {
    api: "graph",
    operation: "PATCH /v1.0/users/:id",
    target: "ADELE.staging@fabrikam.test",
    detail: 'userPrincipalName="adele@fabrikam.test", extensionAttribute1="x", employeeApiKey="k-123456"',
  }),
  change(4, {
    api: "graph",
    operation: "POST /v1.0/users",
    target: "someone.else@fabrikam.test",
    detail: "",
  }),
];

let withLog: ApiHarness;
let without: ApiHarness;
let batchId: number;

beforeAll(async () => {
  [withLog, without] = await Promise.all([
    startApiHarness({ tenantChanges: async () => log }),
    startApiHarness(),
  ]);
  const yaml = testRunbookYaml({ name: "wave" });
  expect((await withLog.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
  const csv =
    "UserPrincipalName,StagingUPN\n" +
    "adele@contoso.test,adele.staging@fabrikam.test\n" +
    "isaiah@contoso.test,isaiah.staging@fabrikam.test\n";
  const created = await withLog.request("POST", "/batches?runbook=wave", { body: csv, type: "text/csv" });
  expect(created.status, created.text).toBe(201);
  batchId = created.body.id;
});

afterAll(async () => {
  await Promise.all([withLog?.stop(), without?.stop()]);
});

describe("GET /api/tenant/changes", () => {
  it("lists every change oldest first, each with the member it is about, to a Reader", async () => {
    const response = await withLog.request("GET", "/tenant/changes", { token: withLog.readerToken });
    expect(response.status, response.text).toBe(200);
    expectDocumentedBody(z.array(tenantChangeSchema), response.body);
    expect(
      response.body.map((c: { sequence: number; member: string | null; batchId: number | null }) => [
        c.sequence,
        c.member,
        c.batchId,
      ]),
    ).toEqual([
      [1, "isaiah@contoso.test", batchId], // named in the detail of a group change
      [2, "adele@contoso.test", batchId], // the mail user named after her staging UPN's local part
      [3, "adele@contoso.test", batchId], // her staging UPN, in another case
      [4, null, null],
    ]);
  });

  it("masks the values of secret-looking properties, and only those", async () => {
    const response = await withLog.request("GET", "/tenant/changes");
    expect(response.body[2].detail).toBe(
      'userPrincipalName="adele@fabrikam.test", extensionAttribute1="x", employeeApiKey=***',
    );
    expect(JSON.stringify(response.body)).not.toContain("k-123456");
  });

  it("keeps one batch's members' changes with batchId", async () => {
    const response = await withLog.request("GET", `/tenant/changes?batchId=${batchId}`);
    expect(response.body.map((c: { sequence: number }) => c.sequence)).toEqual([1, 2, 3]);
    const other = await withLog.request("GET", `/tenant/changes?batchId=${batchId + 1000}`);
    expect(other.body).toEqual([]);
  });

  it("answers 404 resource.not_found, saying why, when the worker has no simulated tenant in this process", async () => {
    const response = await without.request("GET", "/tenant/changes");
    expect(response.status).toBe(404);
    expect(response.body.code).toBe("resource.not_found");
    expect(response.body.detail).toContain("only a simulated tenant in this process records its changes");
  });

  it("needs a token", async () => {
    expect((await withLog.request("GET", "/tenant/changes", { token: null })).status).toBe(401);
  });
});

describe("maskSecretProperties", () => {
  it("masks quoted and bare values under secret-looking names, whatever the separator", () => {
    expect(
      maskSecretProperties('password="a, b"; ClientSecret=xyz (Token=t1), DisplayName="Key Person"'),
    ).toBe('password=***; ClientSecret=*** (Token=***), DisplayName="Key Person"');
  });
});
