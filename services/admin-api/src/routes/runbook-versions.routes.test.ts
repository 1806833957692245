import { insertBatch, transitionBatch } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";
import { expectDocumentedBody, expectProblem } from "../../test/routes/batch-members.test-support.ts";
import { deactivateRunbookVersionResponseSchema } from "./runbook-versions.routes.ts";

/** DELETE /api/runbooks/{name}/versions/{v} (000 "Deactivate version"). */
let harness: ApiHarness;

beforeAll(async () => {
  harness = await startApiHarness();
});

afterAll(async () => {
  await harness?.stop();
});

async function publish(name: string): Promise<number> {
  const yaml = testRunbookYaml({ name, phases: ["only"] });
  const response = await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" });
  expect(response.status).toBe(201);
  return response.body.version;
}

const deactivate = (name: string, version: number | string, token?: string) =>
  harness.request("DELETE", `/runbooks/${name}/versions/${version}`, token === undefined ? {} : { token });

const activeFlags = async (name: string) =>
  (await harness.request("GET", `/runbooks/${name}/versions`)).body.map(
    (v: { version: number; isActive: boolean }) => [v.version, v.isActive],
  );

describe("DELETE /api/runbooks/{name}/versions/{v}", () => {
  it("deactivates the active version: the runbook has none until the next publish, which is max+1", async () => {
    await publish("retiring");
    await publish("retiring");
    const response = await deactivate("retiring", 2);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: expect.any(Number),
      name: "retiring",
      version: 2,
      isActive: false,
      alreadyInactive: false,
    });
    expectDocumentedBody(deactivateRunbookVersionResponseSchema, response.body);
    expect(await activeFlags("retiring")).toEqual([
      [2, false],
      [1, false],
    ]);
    // No active version: not listed, not readable as "latest", no new manual batch from it.
    expectProblem(
      await harness.request("GET", "/runbooks/retiring"),
      404,
      "resource.not_found",
      /no active runbook/,
    );
    const listed = await harness.request("GET", "/runbooks");
    expect(listed.body.map((runbook: { name: string }) => runbook.name)).not.toContain("retiring");
    const batch = await harness.request("POST", "/batches?runbook=retiring", {
      body: "UserPrincipalName\na@x.test\n",
      type: "text/csv",
    });
    expectProblem(batch, 404, "resource.not_found", /no active runbook named 'retiring'/);
    // Every version stays readable; publishing again makes version 3 the active one.
    expect((await harness.request("GET", "/runbooks/retiring/versions/2")).body.isActive).toBe(false);
    expect(await publish("retiring")).toBe(3);
    expect(await activeFlags("retiring")).toEqual([
      [3, true],
      [2, false],
      [1, false],
    ]);
  });

  it("leaves running manual batches running on their version", async () => {
    await publish("manual-only");
    const created = await harness.request("POST", "/batches?runbook=manual-only", {
      body: "UserPrincipalName\na@x.test\n",
      type: "text/csv",
    });
    expect(created.status).toBe(201);
    expect((await deactivate("manual-only", 1)).status).toBe(200);
    const advanced = await harness.request("POST", `/batches/${created.body.id}/advance`);
    expect(advanced.status).toBe(202);
    expect(advanced.body).toMatchObject({ action: "phase", phaseName: "only" });
    const added = await harness.request("POST", `/batches/${created.body.id}/members`, {
      body: "UserPrincipalName\nb@x.test\n",
      type: "text/csv",
    });
    expect(added.status).toBe(201);
  });

  it("answers an inactive version (an older one, or a repeated request) with 200 alreadyInactive", async () => {
    await publish("layered");
    await publish("layered");
    const older = await deactivate("layered", 1);
    expect(older.status).toBe(200);
    expect(older.body).toMatchObject({ version: 1, isActive: false, alreadyInactive: true });
    expect(await activeFlags("layered")).toEqual([
      [2, true],
      [1, false],
    ]);
    expect((await deactivate("layered", 2)).body.alreadyInactive).toBe(false);
    expect((await deactivate("layered", 2)).body).toMatchObject({ version: 2, alreadyInactive: true });
  });

  it("refuses while automated batches of the runbook are in flight, naming them; allowed once they end", async () => {
    await publish("scheduled");
    const runbook = await harness.request("GET", "/runbooks/scheduled");
    const automated = await insertBatch(harness.db, {
      runbookId: runbook.body.id,
      batchStartTime: new Date("2030-01-01T00:00:00Z"),
      isManual: false,
      createdBy: null,
    });
    await transitionBatch(harness.db, automated.id, "activate");
    const refused = await deactivate("scheduled", 1);
    expectProblem(
      refused,
      409,
      "state.conflict",
      new RegExp(`version 1 is active and 1 automated batch\\(es\\) are in flight \\(${automated.id}\\)`),
    );
    expect(await activeFlags("scheduled")).toEqual([[1, true]]);
    expect((await harness.request("POST", `/batches/${automated.id}/cancel`)).status).toBe(200);
    expect((await deactivate("scheduled", 1)).status).toBe(200);
    expect(await activeFlags("scheduled")).toEqual([[1, false]]);
  });

  it("answers 404 for an unknown runbook or version, and 400 for a malformed version", async () => {
    await publish("known");
    expectProblem(await deactivate("unknown", 1), 404, "resource.not_found", /no runbook named 'unknown'/);
    expectProblem(
      await deactivate("known", 7),
      404,
      "resource.not_found",
      /runbook 'known' has no version 7/,
    );
    for (const version of ["abc", "0", "1e3", "99999999999"]) {
      expectProblem(
        await deactivate("known", version),
        400,
        "validation.invalid_input",
        /^'version' must be a positive integer/,
      );
    }
    expect(await activeFlags("known")).toEqual([[1, true]]);
  });

  it("refuses a Reader's token with 403, changing nothing", async () => {
    await publish("guarded");
    expect((await deactivate("guarded", 1, harness.readerToken)).status).toBe(403);
    expect(await activeFlags("guarded")).toEqual([[1, true]]);
  });
});
