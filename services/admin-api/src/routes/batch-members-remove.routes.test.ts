import { insertBatch, insertMembers, listMembers, transitionBatch, transitionMember } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";
import {
  expectDocumentedBody,
  expectNothingWritten,
  expectProblem,
  tablesOf,
} from "../../test/routes/batch-members.test-support.ts";
import { removeMemberResponseSchema } from "./batch-members.routes.ts";

/**
 * DELETE /api/batches/{id}/members/{memberId} (000 "Member Removal Protocol"). The harness runs
 * no outbox relay, so the member-removed message stays in the outbox table; the orchestrator's
 * side (open steps cancelled, on_member_removed sent) is the all-in-one manual-batch scenario.
 */
let harness: ApiHarness;
const members = "UserPrincipalName\nadele@contoso.test\nalex@contoso.test\n";

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({ name: "leavers", phases: ["first", "second"] });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});

afterAll(async () => {
  await harness?.stop();
});

/** A manual batch of adele and alex (active at once: the runbook has no init). */
async function newBatch(): Promise<{ id: number; adele: number; alex: number }> {
  const response = await harness.request("POST", "/batches?runbook=leavers", {
    body: members,
    type: "text/csv",
  });
  expect(response.status).toBe(201);
  const [adele, alex] = await listMembers(harness.db, response.body.id);
  return { id: response.body.id, adele: adele!.id, alex: alex!.id };
}

const remove = (batchId: number | string, memberId: number | string, token?: string) =>
  harness.request("DELETE", `/batches/${batchId}/members/${memberId}`, token === undefined ? {} : { token });

describe("DELETE /api/batches/{id}/members/{memberId}", () => {
  it("removes the member and queues member-removed in the same transaction", async () => {
    const { id, adele, alex } = await newBatch();
    const response = await remove(id, alex);
    expect(response.status).toBe(200);
    const removed = (await listMembers(harness.db, id))[1]!;
    expect(response.body).toEqual({
      batchId: id,
      memberId: alex,
      status: "removed",
      removedAt: removed.removedAt!.toISOString(),
      alreadyRemoved: false,
    });
    expectDocumentedBody(removeMemberResponseSchema, response.body);
    expect(removed).toMatchObject({ status: "removed", removeDispatchedAt: expect.any(Date) });
    expect((await listMembers(harness.db, id))[0]).toMatchObject({ id: adele, status: "active" });
    // 000 message type 4: the orchestrator's MemberRemovedHandler cancels steps, runs on_member_removed.
    expect((await tablesOf(harness.db, id)).outbox).toEqual([
      {
        messageId: `member-removed:${alex}`,
        type: "member-removed",
        body: { BatchId: id, MemberKey: "alex@contoso.test", BatchMemberId: alex },
      },
    ]);
    const events = await harness.db
      .selectFrom("events")
      .select(["fromStatus", "toStatus", "reason"])
      .where("entity", "=", "member")
      .where("entityId", "=", alex)
      .execute();
    expect(events).toEqual([{ fromStatus: "active", toStatus: "removed", reason: "removed by operator" }]);
  });

  it("answers a repeated removal with 200 alreadyRemoved, sending nothing more", async () => {
    const { id, alex } = await newBatch();
    expect((await remove(id, alex)).status).toBe(200);
    const again = await expectNothingWritten(harness, id, () => remove(id, alex));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ memberId: alex, status: "removed", alreadyRemoved: true });
    expectDocumentedBody(removeMemberResponseSchema, again.body);
  });

  it("answers 404 for an unknown member and for a member of another batch, writing nothing", async () => {
    const first = await newBatch();
    const second = await newBatch();
    const unknown = await expectNothingWritten(harness, first.id, () => remove(first.id, 2_000_000));
    expectProblem(unknown, 404, "resource.not_found", new RegExp(`batch ${first.id} has no member 2000000`));
    const elsewhere = await expectNothingWritten(harness, second.id, () => remove(first.id, second.alex));
    expectProblem(
      elsewhere,
      404,
      "resource.not_found",
      new RegExp(`batch ${first.id} has no member ${second.alex}`),
    );
    expect((await listMembers(harness.db, second.id)).map((m) => m.status)).toEqual(["active", "active"]);
  });

  it("answers 404 for an unknown batch and 400 for malformed ids", async () => {
    expectProblem(await remove(2_000_000, 1), 404, "resource.not_found", /batch 2000000 does not exist/);
    expectProblem(
      await remove("abc", 1),
      400,
      "validation.invalid_input",
      /^'id' must be a positive integer/,
    );
    expectProblem(
      await remove(1, "0"),
      400,
      "validation.invalid_input",
      /^'memberId' must be a positive integer/,
    );
  });

  it.each([
    ["completed", (id: number) => transitionBatch(harness.db, id, "complete")],
    ["cancelled", (id: number) => harness.request("POST", `/batches/${id}/cancel`)],
  ])("refuses to remove from a %s batch with the reason, writing nothing", async (status, end) => {
    const { id, alex } = await newBatch();
    await end(id);
    const response = await expectNothingWritten(harness, id, () => remove(id, alex));
    expectProblem(
      response,
      409,
      "state.conflict",
      new RegExp(`batch ${id} is ${status}; members can only be removed from a running batch`),
    );
  });

  it("refuses a failed member: its steps were cancelled when it failed", async () => {
    const { id, adele } = await newBatch();
    await transitionMember(harness.db, adele, "fail");
    const response = await expectNothingWritten(harness, id, () => remove(id, adele));
    expectProblem(
      response,
      409,
      "state.conflict",
      new RegExp(`member ${adele} is failed; only an active member`),
    );
  });

  it("refuses an automated batch: its members follow the data source", async () => {
    const runbook = await harness.request("GET", "/runbooks/leavers");
    const automated = await insertBatch(harness.db, {
      runbookId: runbook.body.id,
      batchStartTime: new Date("2030-01-01T00:00:00Z"),
      isManual: false,
      createdBy: null,
    });
    await transitionBatch(harness.db, automated.id, "activate");
    const [member] = await insertMembers(harness.db, automated.id, [{ memberKey: "a@x.test", data: {} }]);
    const response = await expectNothingWritten(harness, automated.id, () =>
      remove(automated.id, member!.id),
    );
    expectProblem(
      response,
      409,
      "state.conflict",
      /is automated: its members follow the runbook's data source/,
    );
  });

  it("refuses a Reader's token with 403, writing nothing", async () => {
    const { id, alex } = await newBatch();
    const response = await expectNothingWritten(harness, id, () => remove(id, alex, harness.readerToken));
    expect(response.status).toBe(403);
  });
});
