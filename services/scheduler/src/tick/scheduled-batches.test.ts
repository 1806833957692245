import { transitionBatch } from "@matoolkit/db";
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

/**
 * 000 "Automated Batch Lifecycle" and "Member Synchronization" with a `postgres` source whose
 * table the test changes between ticks (batch_time_column mode).
 */
let harness: SchedulerHarness;
const T1 = "2030-06-10T09:00:00.000Z";
const T2 = "2030-06-12T09:00:00.000Z";
const T3 = "2030-06-20T09:00:00.000Z";
const now = at("2030-06-01T12:00:00Z");

beforeAll(async () => {
  harness = await startSchedulerHarness();
});

afterAll(async () => {
  await harness?.stop();
});

beforeEach(async () => {
  await deactivateAllRunbooks(harness.db);
});

describe("a scheduled runbook over a changing postgres table", () => {
  it("creates batches, then syncs their members tick after tick", async () => {
    const { db } = harness;
    const name = "wave";
    await publish(db, { name });
    await setSourceMembers(db, name, [
      { upn: "alex@contoso.test", migrationDate: T1, proxies: "smtp:alex@contoso.test;smtp:a@contoso.test" },
      { upn: "bea@contoso.test", migrationDate: T1 },
      { upn: "cy@contoso.test", migrationDate: T2 },
    ]);

    // Tick 1: one batch per batch time, members, phases due at start - offset; no init → active.
    const first = await harness.tickRunbook(name, now);
    expect(first).toMatchObject({ ok: true, sourceRows: 3, membersAdded: 0, membersRemoved: 0 });
    const [b1, b2] = await batchesOf(db, name);
    expect([b1?.batchStartTime?.toISOString(), b2?.batchStartTime?.toISOString()]).toEqual([T1, T2]);
    expect(b1).toMatchObject({ status: "active", isManual: false, createdBy: null, runbookVersion: 1 });
    expect(harness.lifecycleCalls).toEqual([`created:${b1!.id}`, `created:${b2!.id}`]);
    const firstMembers = await membersOf(db, b1!.id);
    expect(firstMembers.map((m) => [m.memberKey, m.status, m.addDispatchedAt])).toEqual([
      ["alex@contoso.test", "active", null],
      ["bea@contoso.test", "active", null],
    ]);
    expect(firstMembers[0]?.dataJson).toEqual({
      UserPrincipalName: "alex@contoso.test",
      DisplayName: "alex@contoso.test",
      MigrationDate: T1,
      ProxyAddresses: ["smtp:alex@contoso.test", "smtp:a@contoso.test"],
    });
    expect(
      (await phasesOf(db, b1!.id)).map((p) => [
        p.phaseName,
        p.sequence,
        p.offsetMinutes,
        p.dueAt?.toISOString(),
        p.status,
        p.runbookVersion,
      ]),
    ).toEqual([
      ["pre-checks", 0, 7200, "2030-06-05T09:00:00.000Z", "pending", 1],
      ["cutover", 1, 0, T1, "pending", 1],
    ]);
    // A new batch's members need no member-added, and without init there is no batch-init.
    expect(await takeOutbox(db)).toEqual([]);

    // Tick 2: Dan joins T1, Bea leaves, Alex's name changes, Cy moves to a new batch time.
    await setSourceMembers(db, name, [
      { upn: "alex@contoso.test", displayName: "Alex Wilber", migrationDate: T1 },
      { upn: "dan@contoso.test", migrationDate: T1 },
      { upn: "cy@contoso.test", migrationDate: T3 },
    ]);
    const second = await harness.tickRunbook(name, at("2030-06-01T12:05:00Z"));
    expect(second).toMatchObject({ ok: true, membersAdded: 1, membersRemoved: 2, membersRefreshed: 1 });
    const batches = await batchesOf(db, name);
    expect(batches.map((b) => b.batchStartTime?.toISOString())).toEqual([T1, T2, T3]);
    const b3 = batches[2]!;
    const members1 = await membersOf(db, b1!.id);
    const byKey = new Map(members1.map((m) => [m.memberKey, m]));
    expect(byKey.get("alex@contoso.test")).toMatchObject({ status: "active", addDispatchedAt: null });
    expect(byKey.get("alex@contoso.test")?.dataJson).toMatchObject({
      DisplayName: "Alex Wilber",
      ProxyAddresses: [],
    });
    expect(byKey.get("bea@contoso.test")).toMatchObject({ status: "removed" });
    expect(byKey.get("bea@contoso.test")?.removedAt).toEqual(at("2030-06-01T12:05:00Z"));
    expect(byKey.get("bea@contoso.test")?.removeDispatchedAt).toEqual(at("2030-06-01T12:05:00Z"));
    expect(byKey.get("dan@contoso.test")?.addDispatchedAt).toEqual(at("2030-06-01T12:05:00Z"));
    expect((await membersOf(db, b2!.id)).map((m) => [m.memberKey, m.status])).toEqual([
      ["cy@contoso.test", "removed"],
    ]);
    expect((await membersOf(db, b3.id)).map((m) => [m.memberKey, m.status, m.addDispatchedAt])).toEqual([
      ["cy@contoso.test", "active", null],
    ]);
    const bea = byKey.get("bea@contoso.test")!;
    const dan = byKey.get("dan@contoso.test")!;
    const cyInB2 = (await membersOf(db, b2!.id))[0]!;
    expect((await takeOutbox(db)).sort((a, b) => a.messageId.localeCompare(b.messageId))).toEqual(
      [
        {
          type: "member-removed",
          messageId: `member-removed:${bea.id}`,
          body: { BatchId: b1!.id, MemberKey: "bea@contoso.test", BatchMemberId: bea.id },
        },
        {
          type: "member-removed",
          messageId: `member-removed:${cyInB2.id}`,
          body: { BatchId: b2!.id, MemberKey: "cy@contoso.test", BatchMemberId: cyInB2.id },
        },
        {
          type: "member-added",
          messageId: `member-added:${dan.id}`,
          body: { BatchId: b1!.id, MemberKey: "dan@contoso.test", BatchMemberId: dan.id },
        },
      ].sort((a, b) => a.messageId.localeCompare(b.messageId)),
    );
    // The removal went through the member state machine: it left an event behind.
    const events = await db
      .selectFrom("events")
      .selectAll()
      .where("entity", "=", "member")
      .where("entityId", "=", bea.id)
      .execute();
    expect(events.map((e) => [e.fromStatus, e.toStatus])).toEqual([["active", "removed"]]);

    // Tick 3, nothing changed: nothing is sent again and no row changes.
    const before = await membersOf(db, b1!.id);
    const third = await harness.tickRunbook(name, at("2030-06-01T12:10:00Z"));
    expect(third).toMatchObject({
      ok: true,
      membersAdded: 0,
      membersRemoved: 0,
      membersRefreshed: 0,
      createdBatchIds: [],
    });
    expect(await takeOutbox(db)).toEqual([]);
    expect(await membersOf(db, b1!.id)).toEqual(before);

    // Tick 4: Bea comes back: a new active member row (the removed one stays as history).
    await setSourceMembers(db, name, [
      { upn: "alex@contoso.test", displayName: "Alex Wilber", migrationDate: T1 },
      { upn: "bea@contoso.test", migrationDate: T1 },
      { upn: "dan@contoso.test", migrationDate: T1 },
      { upn: "cy@contoso.test", migrationDate: T3 },
    ]);
    await harness.tickRunbook(name, at("2030-06-01T12:15:00Z"));
    const beas = (await membersOf(db, b1!.id)).filter((m) => m.memberKey === "bea@contoso.test");
    expect(beas.map((m) => m.status)).toEqual(["removed", "active"]);
    expect((await takeOutbox(db)).map((m) => m.messageId)).toEqual([`member-added:${beas[1]!.id}`]);
  });

  it("dispatches each phase once it is due, only for active batches", async () => {
    const { db } = harness;
    const name = "timing";
    await publish(db, { name });
    await setSourceMembers(db, name, [{ upn: "alex@contoso.test", migrationDate: T1 }]);
    await harness.tickRunbook(name, now);
    const [batch] = await batchesOf(db, name);
    const [preChecks, cutover] = await phasesOf(db, batch!.id);

    // One second before pre-checks is due: nothing.
    expect(await harness.tickRunbook(name, at("2030-06-05T08:59:59Z"))).toMatchObject({
      dispatchedPhaseIds: [],
    });
    // Due exactly now.
    expect(await harness.tickRunbook(name, at("2030-06-05T09:00:00Z"))).toMatchObject({
      dispatchedPhaseIds: [preChecks!.id],
    });
    expect(await takeOutbox(db)).toEqual([
      {
        type: "phase-due",
        messageId: `phase-due:${preChecks!.id}`,
        body: {
          BatchId: batch!.id,
          RunbookName: name,
          RunbookVersion: 1,
          PhaseName: "pre-checks",
          PhaseExecutionId: preChecks!.id,
        },
      },
    ]);
    // Already dispatched: not sent again; cutover still waits.
    await harness.tickRunbook(name, at("2030-06-05T09:05:00Z"));
    expect(await takeOutbox(db)).toEqual([]);
    expect((await phasesOf(db, batch!.id)).map((p) => p.status)).toEqual(["dispatched", "pending"]);
    await harness.tickRunbook(name, at(T1));
    expect((await takeOutbox(db)).map((m) => m.messageId)).toEqual([`phase-due:${cutover!.id}`]);
  });

  it("with init steps: the batch waits in init_dispatched with its batch-init sent, and phases wait for it", async () => {
    const { db } = harness;
    const name = "with-init";
    await publish(db, { name, init: true });
    await setSourceMembers(db, name, [{ upn: "alex@contoso.test", migrationDate: T1 }]);
    // Every phase is already past due: they still wait until init has made the batch active.
    const late = at("2030-06-11T00:00:00Z");
    const outcome = await harness.tickRunbook(name, late);
    expect(outcome).toMatchObject({ ok: true, dispatchedPhaseIds: [] });
    const [batch] = await batchesOf(db, name);
    expect(batch).toMatchObject({ status: "init_dispatched", initDispatchedAt: late });
    expect(await takeOutbox(db)).toEqual([
      {
        type: "batch-init",
        messageId: `batch-init:${batch!.id}:1`,
        body: { BatchId: batch!.id, RunbookName: name, RunbookVersion: 1 },
      },
    ]);
    await harness.tickRunbook(name, late);
    expect(await takeOutbox(db)).toEqual([]);
  });

  it("never restarts a finished batch whose rows are still in the source", async () => {
    const { db } = harness;
    const name = "finished";
    await publish(db, { name });
    await setSourceMembers(db, name, [{ upn: "alex@contoso.test", migrationDate: T1 }]);
    await harness.tickRunbook(name, now);
    const [batch] = await batchesOf(db, name);
    await db.updateTable("phaseExecutions").set({ dueAt: null }).where("batchId", "=", batch!.id).execute();
    // Finish it the only way status changes: through the machine (complete needs active).
    await transitionBatch(db, batch!.id, "complete");
    await setSourceMembers(db, name, [
      { upn: "alex@contoso.test", migrationDate: T1 },
      { upn: "new@contoso.test", migrationDate: T1 },
    ]);
    expect(await harness.tickRunbook(name, now)).toMatchObject({
      ok: true,
      createdBatchIds: [],
      membersAdded: 0,
    });
    expect((await batchesOf(db, name)).map((b) => b.status)).toEqual(["completed"]);
    expect(await membersOf(db, batch!.id)).toHaveLength(1);
  });
});
