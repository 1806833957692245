import {
  insertBatch,
  insertInits,
  insertSteps,
  listMembers,
  listPhases,
  transitionBatch,
  transitionMember,
} from "@matoolkit/db";
import { batchMachine } from "@matoolkit/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

let harness: ApiHarness;

const csv =
  "UserPrincipalName,DisplayName,ProxyAddresses\n" +
  "adele@contoso.test,Adele Vance,smtp:adele@contoso.test; smtp:av@contoso.test\n" +
  "alex@contoso.test,Alex Wilber,\n" +
  "megan@contoso.test,Megan Bowen,smtp:megan@contoso.test\n";

beforeAll(async () => {
  harness = await startApiHarness();
  for (const yaml of [
    testRunbookYaml({ name: "no-init", phases: ["first", "second", "third"] }),
    testRunbookYaml({ name: "with-init", initWorkerId: "worker-01" }),
  ]) {
    const published = await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" });
    expect(published.status).toBe(201);
  }
});

afterAll(async () => {
  await harness?.stop();
});

const createBatch = (runbook: string | undefined, body: string | undefined, type = "text/csv") =>
  harness.request("POST", runbook === undefined ? "/batches" : `/batches?runbook=${runbook}`, {
    body,
    type,
  });

async function created(runbook: string, body = csv): Promise<Json> {
  const response = await createBatch(runbook, body);
  expect(response.status).toBe(201);
  return response.body;
}

describe("POST /api/batches", () => {
  it("creates a manual batch of the CSV's members, recording who created it", async () => {
    const batch = await created("with-init");
    expect(batch).toMatchObject({
      runbookName: "with-init",
      isManual: true,
      batchStartTime: null,
      memberCount: 3,
      createdBy: "admin@example.test",
    });
    const phases = await listPhases(harness.db, batch.id);
    expect(phases.map((p) => [p.phaseName, p.status, p.dueAt])).toEqual([
      ["pre-checks", "pending", null],
      ["cutover", "pending", null],
    ]);
  });

  it("leaves a batch whose runbook has init in detected, and makes one without init active", async () => {
    expect((await created("with-init")).status).toBe("detected");
    expect((await created("no-init")).status).toBe("active");
  });

  it("splits multi_valued_columns into arrays in data_json and keeps the other columns as text", async () => {
    const batch = await created("no-init");
    const members = await listMembers(harness.db, batch.id);
    expect(members.map((m) => [m.memberKey, m.dataJson])).toEqual([
      [
        "adele@contoso.test",
        {
          UserPrincipalName: "adele@contoso.test",
          DisplayName: "Adele Vance",
          ProxyAddresses: ["smtp:adele@contoso.test", "smtp:av@contoso.test"],
        },
      ],
      [
        "alex@contoso.test",
        { UserPrincipalName: "alex@contoso.test", DisplayName: "Alex Wilber", ProxyAddresses: [] },
      ],
      [
        "megan@contoso.test",
        {
          UserPrincipalName: "megan@contoso.test",
          DisplayName: "Megan Bowen",
          ProxyAddresses: ["smtp:megan@contoso.test"],
        },
      ],
    ]);
  });

  it("requires ?runbook", async () => {
    const response = await createBatch(undefined, csv);
    expect(response.status).toBe(400);
    expect(response.body.detail).toContain("'runbook'");
  });

  it("answers an unknown runbook with 404", async () => {
    const response = await createBatch("no-such-runbook", csv);
    expect(response.status).toBe(404);
    expect(response.body.code).toBe("resource.not_found");
  });

  it("rejects a CSV without the primary key column, naming the column", async () => {
    const response = await createBatch("no-init", "Mail,DisplayName\nadele@contoso.test,Adele\n");
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("member_data.invalid");
    expect(response.body.detail).toContain("'UserPrincipalName'");
  });

  it.each([
    ["an empty body", ""],
    ["a blank body", "  \n\n"],
  ])("rejects %s, saying to send a CSV", async (_what, body) => {
    const response = await createBatch("no-init", body);
    expect(response.status).toBe(400);
    expect(response.body.detail).toContain("text/csv");
  });

  it("rejects a CSV with a header and no member rows", async () => {
    const response = await createBatch("no-init", "UserPrincipalName,DisplayName\n");
    expect(response.status).toBe(400);
    expect(response.body.detail).toContain("no member rows");
  });

  it("rejects a body that is not text/csv, saying which Content-Type to use", async () => {
    const response = await createBatch(
      "no-init",
      JSON.stringify([{ UserPrincipalName: "a" }]),
      "application/json",
    );
    expect(response.status).toBe(400);
    expect(response.body.detail).toContain("text/csv");
  });
});

describe("GET /api/batches", () => {
  let older: Json;
  let newer: Json;
  let other: Json;

  beforeAll(async () => {
    const yaml = testRunbookYaml({ name: "listing" });
    await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" });
    older = await created("listing");
    newer = await created("listing");
    other = await created("with-init");
  });

  const list = (query: string) => harness.request("GET", `/batches${query}`, { token: harness.readerToken });

  it("filters by runbook, newest first", async () => {
    const response = await list("?runbook=listing");
    expect(response.status).toBe(200);
    expect(response.body.map((b: Json) => b.id)).toEqual([newer.id, older.id]);
    expect(response.body[0]).toMatchObject({ runbookName: "listing", runbookVersion: 1 });
  });

  it("carries each listed batch's members by status, as GET /api/batches/{id} counts them", async () => {
    const [adele] = await listMembers(harness.db, older.id);
    await transitionMember(harness.db, adele!.id, "fail");
    const response = await list("?runbook=listing");
    expect(response.body.map((b: Json) => [b.id, b.memberCounts])).toEqual([
      [newer.id, { active: 3, failed: 0, removed: 0 }],
      [older.id, { active: 2, failed: 1, removed: 0 }],
    ]);
    const detail = await harness.request("GET", `/batches/${older.id}`, { token: harness.readerToken });
    expect(detail.body.memberCounts).toEqual(response.body[1].memberCounts);
  });

  it("filters by status", async () => {
    const active = await list("?status=active&runbook=listing");
    expect(active.body.map((b: Json) => b.id)).toEqual([newer.id, older.id]);
    const detected = await list("?status=detected");
    const ids = detected.body.map((b: Json) => b.id);
    expect(ids).toContain(other.id);
    expect(detected.body.every((b: Json) => b.status === "detected")).toBe(true);
    expect((await list("?status=completed&runbook=listing")).body).toEqual([]);
  });

  it("rejects an unknown status, listing the allowed ones", async () => {
    const response = await list("?status=running");
    expect(response.status).toBe(400);
    for (const status of batchMachine.states) expect(response.body.detail).toContain(status);
  });

  it("pages with limit and offset", async () => {
    expect((await list("?runbook=listing&limit=1")).body.map((b: Json) => b.id)).toEqual([newer.id]);
    expect((await list("?runbook=listing&limit=1&offset=1")).body.map((b: Json) => b.id)).toEqual([older.id]);
    expect((await list("?runbook=listing&offset=2")).body).toEqual([]);
  });

  it.each([
    ["limit=0", "'limit'"],
    ["limit=1001", "'limit'"],
    ["limit=abc", "'limit'"],
    ["limit=", "'limit'"],
    ["offset=-1", "'offset'"],
    ["offset=1.5", "'offset'"],
    ["offset=100000000000000000000", "'offset'"],
    ["status=active&status=failed", "'status'"],
  ])("rejects %s naming the parameter", async (query, name) => {
    const response = await list(`?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("validation.invalid_input");
    expect(response.body.detail).toContain(name);
  });
});

describe("GET /api/batches/{id} and its sub-resources", () => {
  it("gives the batch with member counts by status and its phases in order, without the YAML", async () => {
    const batch = await created("no-init");
    const [first] = await listMembers(harness.db, batch.id);
    await transitionMember(harness.db, first!.id, "fail", { reason: "test" });
    const response = await harness.request("GET", `/batches/${batch.id}`, { token: harness.readerToken });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: batch.id,
      status: "active",
      runbookName: "no-init",
      runbookVersion: 1,
      memberCounts: { active: 2, failed: 1 },
    });
    expect(response.body.phases.map((p: Json) => [p.phaseName, p.status])).toEqual([
      ["first", "pending"],
      ["second", "pending"],
      ["third", "pending"],
    ]);
    expect(response.body).not.toHaveProperty("yamlContent");
  });

  it("lists members with their data and status", async () => {
    const batch = await created("no-init");
    const response = await harness.request("GET", `/batches/${batch.id}/members`);
    expect(response.status).toBe(200);
    expect(response.body.map((m: Json) => [m.memberKey, m.status])).toEqual([
      ["adele@contoso.test", "active"],
      ["alex@contoso.test", "active"],
      ["megan@contoso.test", "active"],
    ]);
    expect(response.body[0].dataJson.ProxyAddresses).toHaveLength(2);
  });

  it("lists phases in runbook order", async () => {
    const batch = await created("no-init");
    const response = await harness.request("GET", `/batches/${batch.id}/phases`);
    expect(response.body.map((p: Json) => [p.sequence, p.phaseName, p.dueAt])).toEqual([
      [0, "first", null],
      [1, "second", null],
      [2, "third", null],
    ]);
  });

  it("gives steps as { init, steps }: init executions, then a page of step executions", async () => {
    const batch = await created("with-init");
    const empty = await harness.request("GET", `/batches/${batch.id}/steps`);
    expect(empty.body).toEqual({ init: [], steps: [] });

    const [member] = await listMembers(harness.db, batch.id);
    const [phase] = await listPhases(harness.db, batch.id);
    await insertInits(harness.db, [
      {
        batchId: batch.id,
        runbookVersion: 1,
        stepName: "create-group",
        stepIndex: 0,
        workerId: "w",
        functionName: "F",
      },
    ]);
    await insertSteps(
      harness.db,
      [0, 1].map((stepIndex) => ({
        batchId: batch.id,
        phaseExecutionId: phase!.id,
        batchMemberId: member!.id,
        stepName: `step-${stepIndex}`,
        stepIndex,
        workerId: "w",
        functionName: "F",
      })),
    );
    const response = await harness.request("GET", `/batches/${batch.id}/steps`);
    expect(response.status).toBe(200);
    expect(response.body.init.map((i: Json) => [i.stepName, i.status])).toEqual([
      ["create-group", "pending"],
    ]);
    expect(response.body.steps.map((s: Json) => [s.stepName, s.batchMemberId])).toEqual([
      ["step-0", member!.id],
      ["step-1", member!.id],
    ]);
    const page = await harness.request("GET", `/batches/${batch.id}/steps?limit=1&offset=1`);
    expect(page.body.steps.map((s: Json) => s.stepName)).toEqual(["step-1"]);
    expect(page.body.init).toHaveLength(1);
  });

  it.each(["", "/members", "/phases", "/steps"])(
    "answers an unknown batch on '%s' with 404",
    async (suffix) => {
      const response = await harness.request("GET", `/batches/999999${suffix}`);
      expect(response.status).toBe(404);
      expect(response.body.code).toBe("resource.not_found");
    },
  );

  it.each(["abc", "0", "1e3", "99999999999"])("answers batch id '%s' with 400", async (id) => {
    const response = await harness.request("GET", `/batches/${id}`);
    expect(response.status).toBe(400);
    expect(response.body.detail).toContain("'id'");
  });

  it("reads an automated batch too", async () => {
    const runbook = await harness.request("GET", "/runbooks/no-init");
    const automated = await insertBatch(harness.db, {
      runbookId: runbook.body.id,
      batchStartTime: new Date("2030-01-01T00:00:00Z"),
      isManual: false,
      createdBy: null,
    });
    await transitionBatch(harness.db, automated.id, "activate");
    const response = await harness.request("GET", `/batches/${automated.id}`);
    expect(response.body).toMatchObject({ isManual: false, status: "active", memberCounts: {}, phases: [] });
  });
});
