import { insertBatch, insertSteps, listMembers, listPhases } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

/**
 * The batch read routes look the batch up only when what they read is empty (rows reference their
 * batch, so any row proves it exists), and read a page of steps by its ids first. These are the
 * edges of that: empty answers of a batch that exists, 404s of one that does not, and pages of a
 * batch whose steps interleave with another's.
 */
let harness: ApiHarness;
let runbookId: number;

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({ name: "paged", phases: ["only"] });
  const published = await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" });
  expect(published.status).toBe(201);
  runbookId = published.body.id;
});

afterAll(async () => {
  await harness?.stop();
});

async function newBatch(memberCount: number): Promise<number> {
  const csv = ["UserPrincipalName", ...Array.from({ length: memberCount }, (_, i) => `p${i}@contoso.test`)];
  const response = await harness.request("POST", "/batches?runbook=paged", {
    body: `${csv.join("\n")}\n`,
    type: "text/csv",
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

/** Step `stepIndex` for every member of each batch, the batches' rows alternating by id. */
async function interleavedSteps(batchIds: readonly number[], stepIndex: number) {
  const rows = await Promise.all(
    batchIds.map(async (batchId) => {
      const [phase] = await listPhases(harness.db, batchId);
      return (await listMembers(harness.db, batchId)).map((member) => ({
        batchId,
        phaseExecutionId: phase!.id,
        batchMemberId: member.id,
        stepName: `step-${stepIndex}`,
        stepIndex,
        workerId: "worker-01",
        functionName: "Test-Echo",
      }));
    }),
  );
  // One insert per row, alternating batches, so their ids interleave.
  for (let index = 0; index < Math.max(...rows.map((r) => r.length)); index += 1) {
    for (const batchRows of rows)
      if (batchRows[index] !== undefined) await insertSteps(harness.db, [batchRows[index]!]);
  }
}

describe("batch read routes", () => {
  it("page a batch's steps by offset in id order, skipping another batch's interleaved steps", async () => {
    const [mine, theirs] = [await newBatch(3), await newBatch(3)];
    await interleavedSteps([mine, theirs], 0);
    await interleavedSteps([mine, theirs], 1);
    const all = (await harness.request("GET", `/batches/${mine}/steps?limit=100`)).body.steps as Json[];
    expect(all).toHaveLength(6);
    expect(all.every((step) => step.batchId === mine)).toBe(true);
    expect(all.map((step) => step.id)).toEqual([...all.map((step) => step.id)].sort((a, b) => a - b));

    const pages: Json[] = [];
    for (let offset = 0; offset < 8; offset += 4) {
      const page = await harness.request("GET", `/batches/${mine}/steps?limit=4&offset=${offset}`);
      expect(page.status).toBe(200);
      pages.push(...page.body.steps);
    }
    expect(pages).toEqual(all);
  });

  it("answer an existing batch's empty reads with 200 and nothing, an unknown batch's with 404", async () => {
    const automated = await insertBatch(harness.db, {
      runbookId,
      batchStartTime: new Date("2030-01-01T00:00:00Z"),
      isManual: false,
      createdBy: null,
    });
    const withMembers = await newBatch(1);
    const reads: Array<[string, unknown]> = [
      [`/batches/${automated.id}/members`, []],
      [`/batches/${withMembers}/steps?offset=1000`, { init: [], steps: [] }],
      [
        `/batches/${automated.id}/events?afterId=${Number.MAX_SAFE_INTEGER}`,
        { items: [], nextAfterId: null },
      ],
      [`/batches/${automated.id}/phases`, []],
    ];
    for (const [path, empty] of reads) {
      const response = await harness.request("GET", path);
      expect({ path, status: response.status, body: response.body }).toEqual({
        path,
        status: 200,
        body: empty,
      });
      const unknown = await harness.request("GET", path.replace(/\/batches\/\d+/, "/batches/999999"));
      expect({ path, status: unknown.status, code: unknown.body.code }).toEqual({
        path,
        status: 404,
        code: "resource.not_found",
      });
    }
  });
});
