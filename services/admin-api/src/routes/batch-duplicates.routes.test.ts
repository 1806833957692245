import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";
import { defaultRequestLimits } from "../http/request-limits.ts";
import { expectProblem } from "../../test/routes/batch-members.test-support.ts";

/**
 * POST /api/batches refuses a double submit (issue 12): the same runbook and the same CSV (line
 * endings aside) within the window (10 minutes here, as by default) of a batch that is not
 * cancelled answers 409 batch.duplicate naming that batch, and writes nothing.
 */
let harness: ApiHarness;

beforeAll(async () => {
  // Four identical uploads race below from one caller: more than a caller may run by default.
  harness = await startApiHarness({
    duplicateBatchWindowMinutes: 10,
    requestLimits: { ...defaultRequestLimits, heavyPerCaller: 4, heavyTotal: 4 },
  });
  for (const name of ["dup", "dup-other"]) {
    const yaml = testRunbookYaml({ name });
    expect(
      (await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status,
    ).toBe(201);
  }
});

afterAll(async () => {
  await harness?.stop();
});

let unique = 0;
/** A CSV no other test uploads. */
function freshCsv(): string {
  unique += 1;
  return `UserPrincipalName\nuser-${unique}-a@contoso.test\nuser-${unique}-b@contoso.test\n`;
}

const create = (csv: string, query = "runbook=dup") =>
  harness.request("POST", `/batches?${query}`, { body: csv, type: "text/csv" });

async function counts() {
  const count = async (table: "batches" | "batchMembers" | "phaseExecutions" | "events") =>
    Number(
      (
        await harness.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    batches: await count("batches"),
    members: await count("batchMembers"),
    phases: await count("phaseExecutions"),
    events: await count("events"),
  };
}

describe("the same CSV for the same runbook again", () => {
  it("is refused with 409 batch.duplicate naming the existing batch, writing nothing", async () => {
    const csv = freshCsv();
    const first = await create(csv);
    expect(first.status).toBe(201);
    const before = await counts();
    const again = await create(csv);
    expectProblem(
      again,
      409,
      "batch.duplicate",
      new RegExp(`^batch ${first.body.id} was created from the same`),
    );
    expect(again.body.existingBatchId).toBe(first.body.id);
    expect(again.body.detail).toContain("allowDuplicate=true");
    expect(await counts()).toEqual(before);
  });

  it("is the same CSV whatever its line endings, BOM or trailing blank lines", async () => {
    const csv = freshCsv();
    const first = await create(csv);
    expect(first.status).toBe(201);
    for (const variant of [csv.replace(/\n/g, "\r\n"), `\uFEFF${csv}`, `${csv}\n\n`, csv.trimEnd()]) {
      expect((await create(variant)).body.existingBatchId).toBe(first.body.id);
    }
  });

  it("is created with allowDuplicate=true, and refused again after that naming the newest", async () => {
    const csv = freshCsv();
    const first = await create(csv);
    const second = await create(csv, "runbook=dup&allowDuplicate=true");
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
    expect((await create(csv)).body.existingBatchId).toBe(second.body.id);
    const bad = await create(csv, "runbook=dup&allowDuplicate=yes");
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain("'allowDuplicate'");
  });

  it("is created once the window has passed", async () => {
    const csv = freshCsv();
    const first = await create(csv);
    await sql`UPDATE batch_source_fingerprints SET created_at = now() - interval '11 minutes'
      WHERE batch_id = ${first.body.id}`.execute(harness.db);
    const later = await create(csv);
    expect(later.status).toBe(201);
  });

  it("is created when the earlier batch was cancelled", async () => {
    const csv = freshCsv();
    const first = await create(csv);
    expect((await harness.request("POST", `/batches/${first.body.id}/cancel`)).status).toBe(200);
    expect((await create(csv)).status).toBe(201);
  });

  it("is not a duplicate for another runbook, nor with other members", async () => {
    const csv = freshCsv();
    expect((await create(csv)).status).toBe(201);
    expect((await create(csv, "runbook=dup-other")).status).toBe(201);
    expect((await create(`${csv}extra@contoso.test\n`)).status).toBe(201);
  });

  it("creates one batch when identical uploads arrive at the same moment", async () => {
    const csv = freshCsv();
    const before = await counts();
    const responses = await Promise.all(Array.from({ length: 4 }, () => create(csv)));
    expect(responses.map((response) => response.status).sort()).toEqual([201, 409, 409, 409]);
    const created = responses.find((response) => response.status === 201)!;
    for (const response of responses.filter((r) => r.status === 409)) {
      expect(response.body.existingBatchId).toBe(created.body.id);
    }
    expect((await counts()).batches).toBe(before.batches + 1);
  });
});

describe("the window setting", () => {
  it("0 turns the check off", async () => {
    const off = await startApiHarness({ duplicateBatchWindowMinutes: 0 });
    try {
      const yaml = testRunbookYaml({ name: "dup" });
      expect((await off.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
        201,
      );
      const csv = freshCsv();
      for (let i = 0; i < 2; i++) {
        expect(
          (await off.request("POST", "/batches?runbook=dup", { body: csv, type: "text/csv" })).status,
        ).toBe(201);
      }
    } finally {
      await off.stop();
    }
  });
});
