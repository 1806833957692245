import { insertBatch, insertMembers, listMembers, transitionBatch, transitionMember } from "@matoolkit/db";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startApiHarness,
  testRunbookYaml,
  type ApiHarness,
  type ApiResponse,
} from "../../test/api-test-harness.ts";
import { defaultRequestLimits } from "../http/request-limits.ts";
import {
  expectDocumentedBody,
  expectNothingWritten,
  expectProblem,
  tablesOf,
} from "../../test/routes/batch-members.test-support.ts";
import { addMembersResponseSchema } from "./batch-members.routes.ts";

/**
 * POST /api/batches/{id}/members: late joiners of a manual batch (000 "Member Catch-Up Protocol").
 * The harness runs no outbox relay, so the member-added messages stay in the outbox table; the
 * orchestrator's side (catch-up steps really run) is the all-in-one manual-batch scenario.
 */
let harness: ApiHarness;
const starting =
  "UserPrincipalName,DisplayName\nadele@contoso.test,Adele Vance\nalex@contoso.test,Alex Wilber\n";
const csv = "text/csv";

beforeAll(async () => {
  // Five uploads race below from one caller: more heavy requests than a caller may run by default.
  harness = await startApiHarness({
    requestLimits: { ...defaultRequestLimits, heavyPerCaller: 5, heavyTotal: 5 },
  });
  const yaml = testRunbookYaml({ name: "joiners", phases: ["first", "second"] });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});

afterAll(async () => {
  await harness?.stop();
});

/** A manual batch of adele and alex; the runbook has no init, so it is active at once. */
async function newBatch(): Promise<number> {
  const response = await harness.request("POST", "/batches?runbook=joiners", { body: starting, type: csv });
  expect(response.status).toBe(201);
  expect(response.body.status).toBe("active");
  return response.body.id;
}

const addMembers = (id: number | string, body: string, type = csv, token?: string) =>
  harness.request("POST", `/batches/${id}/members`, {
    body,
    type,
    ...(token === undefined ? {} : { token }),
  });

describe("POST /api/batches/{id}/members", () => {
  it("adds CSV members with their data and queues one member-added message each, in one go", async () => {
    const id = await newBatch();
    const response = await addMembers(
      id,
      "UserPrincipalName,DisplayName,ProxyAddresses\n" +
        "megan@contoso.test,Megan Bowen,smtp:megan@contoso.test;smtp:mb@contoso.test\n" +
        "lynne@contoso.test,Lynne Robbins,\n",
    );
    expect(response.status).toBe(201);
    const [megan, lynne] = (await listMembers(harness.db, id)).slice(2);
    expect(response.body).toEqual({
      batchId: id,
      members: [
        {
          id: megan!.id,
          memberKey: "megan@contoso.test",
          status: "active",
          addedAt: megan!.addedAt.toISOString(),
        },
        {
          id: lynne!.id,
          memberKey: "lynne@contoso.test",
          status: "active",
          addedAt: lynne!.addedAt.toISOString(),
        },
      ],
    });
    expectDocumentedBody(addMembersResponseSchema, response.body);
    expect(megan).toMatchObject({
      dataJson: {
        UserPrincipalName: "megan@contoso.test",
        DisplayName: "Megan Bowen",
        ProxyAddresses: ["smtp:megan@contoso.test", "smtp:mb@contoso.test"],
      },
      addDispatchedAt: expect.any(Date),
    });
    // The orchestrator's MemberAddedHandler takes it from here (000 message type 3).
    expect((await tablesOf(harness.db, id)).outbox).toEqual([
      {
        messageId: `member-added:${megan!.id}`,
        type: "member-added",
        body: { BatchId: id, MemberKey: "megan@contoso.test", BatchMemberId: megan!.id },
      },
      {
        messageId: `member-added:${lynne!.id}`,
        type: "member-added",
        body: { BatchId: id, MemberKey: "lynne@contoso.test", BatchMemberId: lynne!.id },
      },
    ]);
  });

  it("adds JSON members ({ members: [row, …] }), lists for multi-valued columns accepted", async () => {
    const id = await newBatch();
    const response = await addMembers(
      id,
      JSON.stringify({
        members: [
          { UserPrincipalName: " megan@contoso.test ", ProxyAddresses: ["smtp:a@x.test", "smtp:b@x.test"] },
        ],
      }),
      "application/json",
    );
    expect(response.status).toBe(201);
    expect(response.body.members).toEqual([expect.objectContaining({ memberKey: "megan@contoso.test" })]);
    const added = (await listMembers(harness.db, id))[2]!;
    expect(added.dataJson).toEqual({
      UserPrincipalName: "megan@contoso.test",
      ProxyAddresses: ["smtp:a@x.test", "smtp:b@x.test"],
    });
    expect((await tablesOf(harness.db, id)).outbox.map((row) => row.type)).toEqual(["member-added"]);
  });

  it("accepts members of a batch that has not started yet (they are simply in its first phase)", async () => {
    const runbook = await harness.request("GET", "/runbooks/joiners");
    const detected = await insertBatch(harness.db, {
      runbookId: runbook.body.id,
      batchStartTime: null,
      isManual: true,
      createdBy: "admin@example.test",
    });
    const response = await addMembers(detected.id, "UserPrincipalName\nmegan@contoso.test\n");
    expect(response.status).toBe(201);
    expect((await tablesOf(harness.db, detected.id)).outbox).toHaveLength(1);
  });

  it("refuses a key already active in the batch, naming the row and not the key, and writes nothing", async () => {
    const id = await newBatch();
    const response = await expectNothingWritten(harness, id, () =>
      addMembers(id, "UserPrincipalName\nmegan@contoso.test\nalex@contoso.test\n"),
    );
    expectProblem(response, 409, "state.conflict", /1 member\(s\) already in batch \d+: line 3$/);
    expect(response.body.problems).toEqual([
      { line: 3, message: `already a member of batch ${id} (active)` },
    ]);
    expect(response.text).not.toContain("alex@contoso.test");
    // megan, valid on her own, was not added either.
    expect((await listMembers(harness.db, id)).map((m) => m.memberKey)).toEqual([
      "adele@contoso.test",
      "alex@contoso.test",
    ]);
  });

  it("lets one of several concurrent uploads of the same key win; the others get 409 naming the row", async () => {
    const id = await newBatch();
    // Each upload also brings a key of its own, which a refused upload must not leave behind.
    const bodies = [1, 2, 3, 4, 5].map(
      (n) => `UserPrincipalName\nown${n}@contoso.test\nshared@contoso.test\n`,
    );
    const responses = await Promise.all(bodies.map((body) => addMembers(id, body)));
    expect(responses.map((response) => response.status).sort()).toEqual([201, 409, 409, 409, 409]);
    for (const refused of responses.filter((response) => response.status === 409)) {
      expect(refused.body.problems).toEqual([
        { line: 3, message: `already a member of batch ${id} (active)` },
      ]);
    }
    const { members, outbox } = await tablesOf(harness.db, id);
    const winner = responses.findIndex((response) => response.status === 201) + 1;
    expect(members.map((member) => member.memberKey).slice(2)).toEqual([
      `own${winner}@contoso.test`,
      "shared@contoso.test",
    ]);
    expect(outbox).toHaveLength(2);
  });

  it("refuses a key another upload commits between its check and its insert, keeping none of its own rows", async () => {
    const id = await newBatch();
    let pending: Promise<ApiResponse> | undefined;
    await harness.db.transaction().execute(async (trx) => {
      // Uncommitted: the API's check does not see it, its insert waits on the unique index.
      await insertMembers(trx, id, [{ memberKey: "shared@contoso.test", data: {} }]);
      pending = addMembers(id, "UserPrincipalName\nown@contoso.test\nshared@contoso.test\n");
      await waitForInsertBlockedOnLock();
    });
    const response = await pending!;
    expectProblem(response, 409, "state.conflict", /1 member\(s\) already in batch \d+: line 3$/);
    const { members, outbox } = await tablesOf(harness.db, id);
    expect(members.map((member) => member.memberKey)).toEqual([
      "adele@contoso.test",
      "alex@contoso.test",
      "shared@contoso.test",
    ]);
    expect(outbox).toEqual([]);
  });

  it("names JSON rows by their path", async () => {
    const id = await newBatch();
    const body = JSON.stringify({ members: [{ UserPrincipalName: "adele@contoso.test" }] });
    const response = await expectNothingWritten(harness, id, () => addMembers(id, body, "application/json"));
    expectProblem(response, 409, "state.conflict", /members\[0\]/);
    expect(response.body.problems).toEqual([
      { path: "members.0", message: `already a member of batch ${id} (active)` },
    ]);
  });

  it("refuses a failed member's key, but lets a removed member's key join again", async () => {
    const id = await newBatch();
    const [adele, alex] = await listMembers(harness.db, id);
    await transitionMember(harness.db, adele!.id, "fail");
    await transitionMember(harness.db, alex!.id, "remove");
    const failed = await expectNothingWritten(harness, id, () =>
      addMembers(id, "UserPrincipalName\nadele@contoso.test\n"),
    );
    expectProblem(failed, 409, "state.conflict", /line 2/);
    expect(failed.body.problems[0].message).toContain("(failed)");
    const back = await addMembers(id, "UserPrincipalName\nalex@contoso.test\n");
    expect(back.status).toBe(201);
    expect((await listMembers(harness.db, id)).map((m) => [m.memberKey, m.status])).toEqual([
      ["adele@contoso.test", "failed"],
      ["alex@contoso.test", "removed"],
      ["alex@contoso.test", "active"],
    ]);
  });

  it("refuses an automated batch: its members come from the data source", async () => {
    const runbook = await harness.request("GET", "/runbooks/joiners");
    const automated = await insertBatch(harness.db, {
      runbookId: runbook.body.id,
      batchStartTime: new Date("2030-01-01T00:00:00Z"),
      isManual: false,
      createdBy: null,
    });
    await transitionBatch(harness.db, automated.id, "activate");
    const response = await expectNothingWritten(harness, automated.id, () =>
      addMembers(automated.id, "UserPrincipalName\nmegan@contoso.test\n"),
    );
    expectProblem(
      response,
      409,
      "state.conflict",
      /is automated: its members come from the runbook's data source/,
    );
  });

  it.each([
    ["cancelled", (id: number) => harness.request("POST", `/batches/${id}/cancel`)],
    ["completed", (id: number) => transitionBatch(harness.db, id, "complete")],
  ])("refuses a %s batch with the reason", async (status, end) => {
    const id = await newBatch();
    await end(id);
    const response = await expectNothingWritten(harness, id, () =>
      addMembers(id, "UserPrincipalName\nmegan@contoso.test\n"),
    );
    expectProblem(
      response,
      409,
      "state.conflict",
      new RegExp(`batch ${id} is ${status}; members can only be added`),
    );
  });

  it("validates against the version the batch runs, not the latest one", async () => {
    const v1 = testRunbookYaml({ name: "rekeyed", phases: ["first"] });
    const publish = (yaml: string) =>
      harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" });
    expect((await publish(v1)).status).toBe(201);
    const created = await harness.request("POST", "/batches?runbook=rekeyed", { body: starting, type: csv });
    const id = created.body.id as number;
    // Version 2 keys members by Mail: the batch still runs version 1, keyed by UserPrincipalName.
    expect((await publish(v1.replace("primary_key: UserPrincipalName", "primary_key: Mail"))).status).toBe(
      201,
    );
    expect((await addMembers(id, "UserPrincipalName\nmegan@contoso.test\n")).status).toBe(201);
    const byMail = await expectNothingWritten(harness, id, () =>
      addMembers(id, "Mail\nlynne@contoso.test\n"),
    );
    expectProblem(byMail, 400, "member_data.invalid", /missing primary key column 'UserPrincipalName'/);
  });
});

describe("POST /api/batches/{id}/members: bad input writes nothing", () => {
  let id: number;
  beforeAll(async () => {
    id = await newBatch();
  });

  it.each([
    [
      "a duplicate row",
      "UserPrincipalName\nmegan@contoso.test\nmegan@contoso.test\n",
      /line 3: duplicate primary key \(same as line 2\)/,
    ],
    [
      "a row with an extra field",
      "UserPrincipalName,DisplayName\nmegan@contoso.test,Megan,extra\n",
      /line 2/,
    ],
    [
      "no header row",
      "megan@contoso.test,Megan Bowen\nlynne@contoso.test,Lynne\n",
      /missing primary key column/,
    ],
    ["an empty key", "UserPrincipalName,DisplayName\n,Megan Bowen\n", /line 2: empty primary key/],
  ])("CSV with %s: 400 naming the line, never the values", async (_what, body, detail) => {
    const response = await expectNothingWritten(harness, id, () => addMembers(id, body));
    expectProblem(response, 400, "member_data.invalid", detail);
    expect(response.text).not.toContain("megan@contoso.test");
    expect(response.text).not.toContain("Megan");
  });

  it("JSON rows with problems: 400 listing each by path", async () => {
    const body = JSON.stringify({
      members: [
        { UserPrincipalName: "megan@contoso.test" },
        { DisplayName: "Lynne" },
        { UserPrincipalName: "megan@contoso.test" },
      ],
    });
    const response = await expectNothingWritten(harness, id, () => addMembers(id, body, "application/json"));
    expectProblem(response, 400, "member_data.invalid", /members\[1\]: empty primary key/);
    expect(response.body.problems).toEqual([
      { path: "members.1", message: "empty primary key 'UserPrincipalName'" },
      { path: "members.2", message: "duplicate primary key (same as members[0])" },
    ]);
    expect(response.text).not.toContain("megan@contoso.test");
  });

  it.each([
    // The problem names the offending field by its path (zod's messages describe, never echo).
    ["a bare array", JSON.stringify([{ UserPrincipalName: "megan@contoso.test" }]), ""],
    ["no members", JSON.stringify({ members: [] }), "members"],
    ["an unknown field", JSON.stringify({ members: [{ UserPrincipalName: "a@x.test" }], batch: 1 }), ""],
    [
      "a nested object as a value",
      JSON.stringify({ members: [{ UserPrincipalName: { a: 1 } }] }),
      "members.0.UserPrincipalName",
    ],
  ])("JSON with %s: 400 naming the field", async (_what, body, path) => {
    const response = await expectNothingWritten(harness, id, () => addMembers(id, body, "application/json"));
    expectProblem(response, 400, "validation.invalid_input", /./);
    expect(response.body.problems).toContainEqual(expect.objectContaining({ path }));
    expect(response.text).not.toContain("megan@contoso.test");
  });

  it("malformed JSON: 400", async () => {
    const response = await expectNothingWritten(harness, id, () =>
      addMembers(id, '{"members": [', "application/json"),
    );
    expectProblem(response, 400, "validation.invalid_input", /JSON|Unexpected|Expected/);
  });

  it("an unsupported content type or an empty body: 400 saying what to send", async () => {
    const xml = await expectNothingWritten(harness, id, () =>
      addMembers(id, "<members/>", "application/xml"),
    );
    const whatToSend =
      /^send the members as a CSV body with Content-Type: text\/csv, or as JSON .* application\/json$/;
    expectProblem(xml, 400, "validation.invalid_input", whatToSend);
    expect(xml.body.problems).toEqual([
      { message: "Content-Type must be one of text/csv, text/plain, application/json" },
    ]);
    const empty = await expectNothingWritten(harness, id, () => addMembers(id, "  \n", csv));
    expectProblem(empty, 400, "validation.invalid_input", whatToSend);
    expect(empty.body.problems).toEqual([
      { path: "", message: "the CSV body is empty; send a header row and one member per line" },
    ]);
  });

  it("a Reader's token: 403, nothing written", async () => {
    const response = await expectNothingWritten(harness, id, () =>
      addMembers(id, "UserPrincipalName\nmegan@contoso.test\n", csv, harness.readerToken),
    );
    expect(response.status).toBe(403);
  });

  it("an unknown batch: 404; a malformed id: 400", async () => {
    expectProblem(
      await addMembers(2_000_000, "UserPrincipalName\na@x.test\n"),
      404,
      "resource.not_found",
      /batch 2000000 does not exist/,
    );
    expectProblem(
      await addMembers("abc", "UserPrincipalName\na@x.test\n"),
      400,
      "validation.invalid_input",
      /^'id' must be a positive integer/,
    );
  });
});

/** Until a session's INSERT INTO batch_members waits for a row lock (another transaction's key). */
async function waitForInsertBlockedOnLock(): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND query ILIKE 'insert into "batch_members"%'
    `.execute(harness.db);
    if (rows[0]!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the API's insert never waited on the uncommitted member");
}
