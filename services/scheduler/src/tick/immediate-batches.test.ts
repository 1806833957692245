import { insertBatch, insertMembers, transitionMember } from "@matoolkit/db";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  at,
  batchesOf,
  deactivateAllRunbooks,
  membersOf,
  phasesOf,
  publish,
  setSourceMembers,
  startSchedulerHarness,
  takeOutbox,
  type SchedulerHarness,
} from "../../test/test-support.ts";

/** 000 "Immediate batching": now rounded to 5 minutes; members already in a batch are filtered out. */
let harness: SchedulerHarness;

beforeAll(async () => {
  harness = await startSchedulerHarness();
});

afterAll(async () => {
  await harness?.stop();
});

beforeEach(async () => {
  await deactivateAllRunbooks(harness.db);
});

describe("an immediate-mode runbook", () => {
  it("batches newcomers at now rounded to 5 minutes, leaving members of running batches where they are", async () => {
    const { db } = harness;
    const name = "on-demand";
    const runbook = await publish(db, { name, batching: "immediate" });
    await setSourceMembers(db, name, [{ upn: "alex@contoso.test" }, { upn: "bea@contoso.test" }]);

    await harness.tickRunbook(name, at("2030-06-01T12:02:31Z"));
    const [first] = await batchesOf(db, name);
    expect(first?.batchStartTime).toEqual(at("2030-06-01T12:05:00Z"));
    expect((await membersOf(db, first!.id)).map((m) => m.memberKey)).toEqual([
      "alex@contoso.test",
      "bea@contoso.test",
    ]);
    // Phase offsets count back from the rounded time; T-5d is already past, so it runs now.
    expect((await phasesOf(db, first!.id)).map((p) => [p.dueAt?.toISOString(), p.status])).toEqual([
      ["2030-05-27T12:05:00.000Z", "dispatched"],
      ["2030-06-01T12:05:00.000Z", "pending"],
    ]);
    await takeOutbox(db);

    // Cy appears; an admin's manual batch of this runbook already has Dan.
    const manual = await insertBatch(db, {
      runbookId: runbook.id,
      batchStartTime: null,
      isManual: true,
      createdBy: "admin",
    });
    await insertMembers(db, manual.id, [{ memberKey: "dan@contoso.test", data: {} }]);
    await setSourceMembers(db, name, [
      { upn: "alex@contoso.test", displayName: "Alex W" },
      { upn: "bea@contoso.test" },
      { upn: "cy@contoso.test" },
      { upn: "dan@contoso.test" },
    ]);
    await harness.tickRunbook(name, at("2030-06-01T12:31:00Z"));
    const automated = (await batchesOf(db, name)).filter((batch) => !batch.isManual);
    expect(automated.map((b) => b.batchStartTime?.toISOString())).toEqual([
      "2030-06-01T12:05:00.000Z",
      "2030-06-01T12:30:00.000Z",
    ]);
    expect((await membersOf(db, automated[1]!.id)).map((m) => m.memberKey)).toEqual(["cy@contoso.test"]);
    // Alex stayed in the first batch, with his data refreshed; nobody was added or removed there.
    const firstMembers = await membersOf(db, first!.id);
    expect(firstMembers.map((m) => [m.memberKey, m.status])).toEqual([
      ["alex@contoso.test", "active"],
      ["bea@contoso.test", "active"],
    ]);
    expect(firstMembers[0]?.dataJson).toMatchObject({ DisplayName: "Alex W" });
    expect((await membersOf(db, manual.id)).map((m) => m.status)).toEqual(["active"]);
    expect((await takeOutbox(db)).filter((m) => m.type.startsWith("member-"))).toEqual([]);

    // Bea leaves the source: removed from the batch she was in.
    await setSourceMembers(db, name, [{ upn: "alex@contoso.test" }, { upn: "cy@contoso.test" }]);
    await harness.tickRunbook(name, at("2030-06-01T12:36:00Z"));
    const bea = (await membersOf(db, first!.id)).find((m) => m.memberKey === "bea@contoso.test");
    expect(bea?.status).toBe("removed");
    expect(await takeOutbox(db)).toEqual([
      {
        type: "member-removed",
        messageId: `member-removed:${bea!.id}`,
        body: { BatchId: first!.id, MemberKey: "bea@contoso.test", BatchMemberId: bea!.id },
      },
    ]);
    expect(await batchesOf(db, name)).toHaveLength(3);
  });

  it("adds a newcomer to the batch of the same 5-minute window instead of opening another", async () => {
    const { db } = harness;
    const name = "same-window";
    await publish(db, { name, batching: "immediate" });
    await setSourceMembers(db, name, [{ upn: "alex@contoso.test" }]);
    await harness.tickRunbook(name, at("2030-06-01T12:00:10Z"));
    await takeOutbox(db);
    await setSourceMembers(db, name, [{ upn: "alex@contoso.test" }, { upn: "bea@contoso.test" }]);
    await harness.tickRunbook(name, at("2030-06-01T12:01:10Z"));
    const batches = await batchesOf(db, name);
    expect(batches).toHaveLength(1);
    const bea = (await membersOf(db, batches[0]!.id)).find((m) => m.memberKey === "bea@contoso.test");
    expect(bea?.addDispatchedAt).toEqual(at("2030-06-01T12:01:10Z"));
    expect((await takeOutbox(db)).map((m) => m.messageId)).toEqual([`member-added:${bea!.id}`]);
  });

  it("leaves a failed member in its batch: not re-batched, not removed, not re-added", async () => {
    const { db } = harness;
    const name = "failed-stays";
    await publish(db, { name, batching: "immediate" });
    await setSourceMembers(db, name, [{ upn: "alex@contoso.test" }, { upn: "bea@contoso.test" }]);
    await harness.tickRunbook(name, at("2030-06-01T12:00:00Z"));
    const [batch] = await batchesOf(db, name);
    const bea = (await membersOf(db, batch!.id)).find((m) => m.memberKey === "bea@contoso.test")!;
    await transitionMember(db, bea.id, "fail");
    await takeOutbox(db);

    expect(await harness.tickRunbook(name, at("2030-06-01T12:30:00Z"))).toMatchObject({
      createdBatchIds: [],
      membersAdded: 0,
      membersRemoved: 0,
    });
    expect((await membersOf(db, batch!.id)).map((m) => [m.memberKey, m.status])).toEqual([
      ["alex@contoso.test", "active"],
      ["bea@contoso.test", "failed"],
    ]);
    expect((await takeOutbox(db)).filter((m) => m.type.startsWith("member-"))).toEqual([]);
  });
});
