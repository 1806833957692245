import { insertSteps, listMembers, listPhases, transitionMember, transitionStep } from "@matoolkit/db";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";
import { batchReport } from "../read-models/batch-report.ts";

/** GET /api/batches/{id}/report.csv: one row per member, three columns per step, streamed. */
let harness: ApiHarness;
const runbook = "reported";

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({ name: runbook, phases: ["first", "second"] });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});

afterAll(async () => {
  await harness?.stop();
});

const csvField = (value: string) => (/[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

async function newBatch(keys: readonly string[]): Promise<number> {
  const response = await harness.request("POST", `/batches?runbook=${runbook}`, {
    body: `UserPrincipalName\n${keys.map(csvField).join("\n")}\n`,
    type: "text/csv",
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

/** The first phase's step for every member; returns the step ids in member order. */
async function firstPhaseSteps(batchId: number): Promise<number[]> {
  const [first] = await listPhases(harness.db, batchId);
  const members = await listMembers(harness.db, batchId);
  await insertSteps(
    harness.db,
    members.map((member) => ({
      batchId,
      phaseExecutionId: first!.id,
      batchMemberId: member.id,
      stepName: "first-step",
      stepIndex: 0,
      workerId: "worker-01",
      functionName: "Test-Echo",
    })),
  );
  const rows = await harness.db
    .selectFrom("stepExecutions")
    .select("id")
    .where("batchId", "=", batchId)
    .orderBy("batchMemberId")
    .execute();
  return rows.map((row) => row.id);
}

/** Dispatches the step and ends it, as a worker result would. */
async function endStep(
  id: number,
  event: "succeed" | "fail",
  set: { errorCode?: string; completedAt: Date },
) {
  expect(await transitionStep(harness.db, id, "dispatch")).toBeDefined();
  expect(await transitionStep(harness.db, id, event, { set })).toBeDefined();
}

const download = (batchId: number | string, token = harness.readerToken) =>
  fetch(`${harness.url}/api/batches/${batchId}/report.csv`, {
    headers: { authorization: `Bearer ${token}` },
  });

const header = [
  "member id",
  "member key",
  "member status",
  "first/first-step status",
  "first/first-step error",
  "first/first-step finished",
  "second/second-step status",
  "second/second-step error",
  "second/second-step finished",
  "external ref",
];

describe("GET /api/batches/{id}/report.csv", () => {
  it("streams a 2,000-member batch as 2,001 CSV lines, chunked, as an attachment, to any reader", async () => {
    const keys = Array.from({ length: 2000 }, (_, index) => `m${index}@contoso.test`);
    const batchId = await newBatch(keys);
    const steps = await firstPhaseSteps(batchId);
    await endStep(steps[0]!, "succeed", { completedAt: new Date("2030-06-10T09:00:00Z") });
    await endStep(steps[1]!, "fail", {
      errorCode: "graph.throttled",
      completedAt: new Date("2030-06-10T09:05:00Z"),
    });

    const response = await download(batchId);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="batch-${batchId}-report.csv"`,
    );
    // Chunked: the length was not known when the first byte went out (the server never built it).
    expect(response.headers.get("transfer-encoding")).toBe("chunked");
    expect(response.headers.get("content-length")).toBeNull();
    const text = await response.text();
    const lines = text.split("\r\n");
    expect(lines.pop()).toBe("");
    expect(lines).toHaveLength(2001);
    expect(lines[0]).toBe(header.join(","));
    const members = await listMembers(harness.db, batchId);
    expect(lines[1]).toBe(`${members[0]!.id},m0@contoso.test,active,succeeded,,2030-06-10T09:00:00.000Z,,,,`);
    expect(lines[2]).toBe(
      `${members[1]!.id},m1@contoso.test,active,failed,graph.throttled,2030-06-10T09:05:00.000Z,,,,`,
    );
    expect(lines[3]).toBe(`${members[2]!.id},m2@contoso.test,active,pending,,,,,,`);
    // Every member once, in id order.
    expect(lines.slice(1).map((line) => Number(line.split(",")[0]))).toEqual(members.map((m) => m.id));
  });

  it("reads the members a page at a time: a header chunk, then one chunk per page", async () => {
    const batchId = await newBatch(Array.from({ length: 5 }, (_, index) => `page${index}@contoso.test`));
    const chunks: string[] = [];
    for await (const chunk of (await batchReport(harness.db, batchId, { pageSize: 2 }))!) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.split("\r\n").length - 1)).toEqual([1, 2, 2, 1]);
  });

  it("quotes commas, quotes and line breaks, and defuses cells a spreadsheet would run as formulas", async () => {
    const keys = [
      '=HYPERLINK("http://evil.test","x")',
      "+1@contoso.test",
      "-1@contoso.test",
      "@sum@contoso.test",
      'comma, "quoted"@contoso.test',
      "two\nlines@contoso.test",
      "plain@contoso.test",
    ];
    const batchId = await newBatch(keys);
    const text = await (await download(batchId)).text();
    const rows: string[][] = parse(text, { relax_column_count: false });
    expect(rows[0]).toEqual(header);
    expect(rows.slice(1).map((row) => row[1])).toEqual([
      `'=HYPERLINK("http://evil.test","x")`,
      "'+1@contoso.test",
      "'-1@contoso.test",
      "'@sum@contoso.test",
      'comma, "quoted"@contoso.test',
      "two\nlines@contoso.test",
      "plain@contoso.test",
    ]);
    expect(text).toContain(`"'=HYPERLINK(""http://evil.test"",""x"")"`);
    expect(rows.slice(1).every((row) => row.length === header.length)).toBe(true);
  });

  it("reports a step rerun (retry, redrive) by its current row, and a member removed by its status", async () => {
    const batchId = await newBatch(["a@contoso.test", "b@contoso.test"]);
    const [stepA] = await firstPhaseSteps(batchId);
    await endStep(stepA!, "fail", { errorCode: "graph.throttled", completedAt: new Date() });
    // A redrive resets the row in place (pending, no error); the report shows that, not the old failure.
    expect(await transitionStep(harness.db, stepA!, "redrive")).toBeDefined();
    const [, memberB] = await listMembers(harness.db, batchId);
    expect(await transitionMember(harness.db, memberB!.id, "remove")).toBeDefined();
    const rows: string[][] = parse(await (await download(batchId)).text());
    expect(rows.slice(1).map((row) => row.slice(1, 6))).toEqual([
      ["a@contoso.test", "active", "pending", "", ""],
      ["b@contoso.test", "removed", "pending", "", ""],
    ]);
  });

  it("answers 404 (a problem, no CSV) for a batch that does not exist, and 400 for a bad id", async () => {
    const missing = await download(987654);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(await missing.json()).toMatchObject({
      code: "resource.not_found",
      detail: "batch 987654 does not exist",
    });
    const bad = await download("abc");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: string }).detail).toMatch(/'id' must be a positive integer/);
  });

  it("ends every row with the batch's external ref, defused like any other cell (issue 31)", async () => {
    for (const [given, cell] of [
      ["CHG-42", "CHG-42"],
      ["=1+1", "'=1+1"],
    ]) {
      const response = await harness.request(
        "POST",
        `/batches?runbook=${runbook}&externalRef=${encodeURIComponent(given!)}`,
        { body: "UserPrincipalName\nref1@contoso.test\nref2@contoso.test\n", type: "text/csv" },
      );
      expect(response.status).toBe(201);
      const lines = (await (await download(response.body.id)).text()).split("\r\n").slice(1, -1);
      expect(lines.map((line) => line.split(",").at(-1))).toEqual([cell, cell]);
    }
  });

  it("needs a token", async () => {
    const response = await fetch(`${harness.url}/api/batches/1/report.csv`);
    expect(response.status).toBe(401);
  });
});
