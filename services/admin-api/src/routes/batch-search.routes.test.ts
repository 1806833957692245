import { insertBatch, insertMembers, transitionMember } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

/** Issue 31: externalRef on create, the batch list's new filters, and GET /api/members?key=. */
let harness: ApiHarness;
let runbookId: number;

const csv = "UserPrincipalName,DisplayName,ProxyAddresses\nadele@contoso.test,Adele Vance,\n";
const withTicket = testRunbookYaml({ name: "ticketed" }).replace(
  "  batch_time: immediate\n",
  "  batch_time: immediate\n  external_ref_column: TicketId\n",
);

beforeAll(async () => {
  harness = await startApiHarness();
  for (const yaml of [testRunbookYaml({ name: "plain" }), withTicket]) {
    const published = await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" });
    expect(published.status).toBe(201);
  }
  const listed = await harness.request("GET", "/runbooks/plain");
  runbookId = listed.body.id;
});

afterAll(async () => {
  await harness?.stop();
});

const post = (query: string, body = csv) =>
  harness.request("POST", `/batches?${query}`, { body, type: "text/csv" });

describe("POST /api/batches?externalRef=", () => {
  it("stores the reference, trimmed, and shows it in the create answer, the detail and the list", async () => {
    const response = await post("runbook=plain&externalRef=%20CHG0001%20");
    expect(response.status).toBe(201);
    expect(response.body.externalRef).toBe("CHG0001");
    const detail = await harness.request("GET", `/batches/${response.body.id}`, {
      token: harness.readerToken,
    });
    expect(detail.body.externalRef).toBe("CHG0001");
    const list = await harness.request("GET", "/batches?externalRef=CHG0001");
    expect(list.body.map((batch: Json) => [batch.id, batch.externalRef])).toEqual([
      [response.body.id, "CHG0001"],
    ]);
  });

  it.each([
    ["a control character", "CHG%0A1", "must not contain control characters or unpaired surrogates"],
    ["too long", "x".repeat(129), "must be at most 128 characters"],
    ["blank", "%20%20", "must not be empty"],
  ])(
    "refuses a reference that is %s, naming the parameter, creating nothing",
    async (_what, value, message) => {
      const response = await post(`runbook=plain&externalRef=${value}`);
      expect(response.status).toBe(400);
      expect(response.body.detail).toBe(`'externalRef' ${message}`);
      expect(response.text).not.toContain("CHG");
    },
  );

  it("takes the first non-empty value of the runbook's external_ref_column when none is given", async () => {
    const rows =
      "UserPrincipalName,DisplayName,ProxyAddresses,TicketId\n" +
      "a@contoso.test,A,,\n" +
      "b@contoso.test,B,,REQ-77\n" +
      "c@contoso.test,C,,REQ-78\n";
    const fromColumn = await post("runbook=ticketed", rows);
    expect(fromColumn.status).toBe(201);
    expect(fromColumn.body.externalRef).toBe("REQ-77");
    const given = await post("runbook=ticketed&externalRef=CHG-9", rows);
    expect(given.body.externalRef).toBe("CHG-9");
  });
});

describe("GET /api/batches filters", () => {
  it("filters by createdBy, createdAfter (inclusive), createdBefore (exclusive), combined and paged", async () => {
    const make = async (createdBy: string | null, at: string) => {
      const batch = await insertBatch(harness.db, {
        runbookId,
        batchStartTime: null,
        isManual: true,
        createdBy,
      });
      await harness.db.updateTable("batches").set({ detectedAt: at }).where("id", "=", batch.id).execute();
      return batch.id;
    };
    const early = await make("filter-ada@example.test", "2031-01-01T00:00:00Z");
    const late = await make("filter-ada@example.test", "2031-02-01T00:00:00Z");
    const bobs = await make("filter-bob@example.test", "2031-02-01T00:00:00Z");
    const ids = async (query: string) => {
      const response = await harness.request("GET", `/batches?${query}`, { token: harness.readerToken });
      expect(response.status).toBe(200);
      return response.body.map((batch: Json) => batch.id);
    };
    expect(await ids("createdBy=filter-ada@example.test")).toEqual([late, early]);
    expect(await ids("createdAfter=2031-02-01T00:00:00Z&createdBefore=2031-03-01T00:00:00Z")).toEqual([
      bobs,
      late,
    ]);
    expect(await ids("createdBefore=2031-02-01T01:00:00%2B01:00&createdAfter=2030-12-31T00:00:00Z")).toEqual([
      early,
    ]);
    expect(await ids("createdBy=filter-ada@example.test&createdAfter=2031-01-15T00:00:00Z")).toEqual([late]);
    expect(await ids("createdBy=filter-ada@example.test&limit=1&offset=1")).toEqual([early]);
  });

  it("refuses a bad timestamp or filter with a 400 naming each bad parameter", async () => {
    const response = await harness.request(
      "GET",
      "/batches?createdAfter=yesterday&createdBefore=2031-01-01&createdBy=&externalRef=a%07b",
      { token: harness.readerToken },
    );
    expect(response.status).toBe(400);
    const problems = Object.fromEntries(response.body.problems.map((p: Json) => [p.path, p.message]));
    expect(problems).toEqual({
      createdAfter: "must be an ISO 8601 timestamp with a time zone, e.g. 2030-01-31T00:00:00Z",
      createdBefore: "must be an ISO 8601 timestamp with a time zone, e.g. 2030-01-31T00:00:00Z",
      createdBy: "must be a non-empty string",
      externalRef: "must not contain control characters or unpaired surrogates",
    });
    expect(response.body.detail).toContain("'createdAfter' must be an ISO 8601 timestamp");
  });
});

describe("GET /api/members?key=", () => {
  it("finds every batch a key is or was in, ignoring case, for a Reader, newest first, paged", async () => {
    const first = await post(
      "runbook=plain&externalRef=CHG-FIND",
      "UserPrincipalName,DisplayName,ProxyAddresses\nMegan@Contoso.test,Megan,\n",
    );
    const second = await post(
      "runbook=plain",
      "UserPrincipalName,DisplayName,ProxyAddresses\nmegan@contoso.test,Megan,\n",
    );
    const [member] = await insertMembers(harness.db, second.body.id, [
      { memberKey: "other@contoso.test", data: {} },
    ]);
    await transitionMember(harness.db, member!.id, "remove");

    const response = await harness.request("GET", "/members?key=MEGAN@contoso.test", {
      token: harness.readerToken,
    });
    expect(response.status).toBe(200);
    expect(response.body.map((row: Json) => [row.batchId, row.memberKey, row.memberStatus])).toEqual([
      [second.body.id, "megan@contoso.test", "active"],
      [first.body.id, "Megan@Contoso.test", "active"],
    ]);
    expect(response.body[1]).toMatchObject({
      runbookName: "plain",
      runbookVersion: 1,
      batchStatus: "active",
      externalRef: "CHG-FIND",
      isManual: true,
      removedAt: null,
    });
    expect(response.body[1]).not.toHaveProperty("dataJson");

    // Erased with one case: every row the search finds is erased (any case), and stays findable.
    const erased = await harness.request("DELETE", "/members/Megan@Contoso.test?force=true");
    expect(erased.status).toBe(200);
    const after = await harness.request("GET", "/members?key=megan@contoso.test", {
      token: harness.readerToken,
    });
    expect(after.body.map((row: Json) => [row.batchId, row.erasedAt === null])).toEqual([
      [second.body.id, false],
      [first.body.id, false],
    ]);

    const page = await harness.request("GET", "/members?key=megan@contoso.test&limit=1&offset=1", {
      token: harness.readerToken,
    });
    expect(page.body.map((row: Json) => row.batchId)).toEqual([first.body.id]);
    const removed = await harness.request("GET", "/members?key=other@contoso.test", {
      token: harness.operatorToken,
    });
    expect(removed.body.map((row: Json) => [row.memberStatus, row.removedAt === null])).toEqual([
      ["removed", false],
    ]);
    const none = await harness.request("GET", "/members?key=megan", { token: harness.readerToken });
    expect(none.body).toEqual([]);
  });

  it("needs a token, and a key, without echoing what was sent", async () => {
    expect((await harness.request("GET", "/members?key=a@b.test", { token: null })).status).toBe(401);
    const missing = await harness.request("GET", "/members", { token: harness.readerToken });
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toBe("'key' is required");
    const tooLong = await harness.request("GET", `/members?key=${"k".repeat(513)}&limit=0`, {
      token: harness.readerToken,
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.detail).toBe(
      "'key' must be at most 512 characters; 'limit' must be between 1 and 1000",
    );
    expect(tooLong.text).not.toContain("kkkk");
  });
});

describe("the OpenAPI document", () => {
  it("describes the member search for every role and the new list and create parameters", async () => {
    const document = (await harness.request("GET", "/openapi.json", { token: null })).body;
    expect(document.paths["/api/members"].get["x-required-roles"]).toEqual(["Reader", "Operator", "Admin"]);
    const params = (path: string, method: string) =>
      Object.fromEntries(
        document.paths[path][method].parameters.map((p: Json) => [p.name, p.schema.format ?? p.schema.type]),
      );
    expect(params("/api/batches", "get")).toMatchObject({
      createdBy: "string",
      createdAfter: "date-time",
      createdBefore: "date-time",
      externalRef: "string",
    });
    expect(params("/api/batches", "post")).toMatchObject({ externalRef: "string" });
    expect(document.components.schemas.BatchListItem.properties.externalRef).toBeDefined();
  });
});
