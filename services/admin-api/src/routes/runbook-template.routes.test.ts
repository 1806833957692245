import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";
import { expectProblem } from "../../test/routes/batch-members.test-support.ts";

/** GET /api/runbooks/{name}/template (000 "Download CSV template"). */
let harness: ApiHarness;
const pilotYaml = readFileSync(
  resolve(import.meta.dirname, "../../../../examples/contoso-pilot.yaml"),
  "utf8",
);

beforeAll(async () => {
  harness = await startApiHarness();
  for (const yaml of [pilotYaml, testRunbookYaml({ name: "plain" })]) {
    expect(
      (await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status,
    ).toBe(201);
  }
});

afterAll(async () => {
  await harness?.stop();
});

/** The harness parses bodies as JSON; a CSV download is read as text. */
async function download(path: string, token = harness.readerToken) {
  const response = await fetch(`${harness.url}/api${path}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe("GET /api/runbooks/{name}/template", () => {
  it("downloads the header row of the sample runbook's member CSV, to any reader", async () => {
    const response = await download("/runbooks/contoso-pilot/template");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("content-disposition")).toBe(
      'attachment; filename="contoso-pilot-template.csv"',
    );
    // Key, batch time column, multi-valued column, then what the steps reference; not
    // NotifiedAddress (a worker output) nor _batch_id (init's special variable).
    expect(response.text).toBe("UserPrincipalName,MigrationDate,ProxyAddresses,PreCheck,TargetEmail\r\n");
  });

  it("is a CSV that, filled in, creates a batch", async () => {
    const header = (await download("/runbooks/contoso-pilot/template")).text;
    const created = await harness.request("POST", "/batches?runbook=contoso-pilot", {
      body: `${header}a@contoso.test,2030-01-01T00:00:00Z,smtp:a@contoso.test,Echo,a@fabrikam.test\r\n`,
      type: "text/csv",
    });
    expect(created.status).toBe(201);
    expect(created.body.memberCount).toBe(1);
  });

  it("gives an older version's columns with ?version=", async () => {
    const v2 = pilotYaml.replace("TargetEmail", "DestinationAddress");
    expect((await harness.request("POST", "/runbooks", { body: v2, type: "application/yaml" })).status).toBe(
      201,
    );
    expect((await download("/runbooks/contoso-pilot/template")).text).toContain(",DestinationAddress");
    expect((await download("/runbooks/contoso-pilot/template?version=1")).text).toContain(",TargetEmail");
  });

  it("answers 404 for an unknown runbook or version and 400 for a malformed version", async () => {
    expectProblem(
      await harness.request("GET", "/runbooks/nope/template"),
      404,
      "resource.not_found",
      /'nope'/,
    );
    expectProblem(
      await harness.request("GET", "/runbooks/plain/template?version=9"),
      404,
      "resource.not_found",
      /runbook 'plain' has no version 9/,
    );
    expectProblem(
      await harness.request("GET", "/runbooks/plain/template?version=x"),
      400,
      "validation.invalid_input",
      /^'version' must be a positive integer/,
    );
  });

  it("is described in the OpenAPI document as a text/csv download with an optional version", async () => {
    const document = await harness.request("GET", "/openapi.json", { token: null });
    const operation = document.body.paths["/api/runbooks/{name}/template"].get;
    expect(Object.keys(operation.responses["200"].content)).toEqual(["text/csv"]);
    expect(operation.parameters).toEqual([
      expect.objectContaining({ name: "name", in: "path", required: true }),
      expect.objectContaining({ name: "version", in: "query", required: false }),
    ]);
    expect(operation["x-required-roles"]).toEqual(["Reader", "Operator", "Admin"]);
  });

  it("needs a token", async () => {
    expect((await harness.request("GET", "/runbooks/plain/template", { token: null })).status).toBe(401);
  });
});
