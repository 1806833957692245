import { getActiveRunbook, insertBatch, insertPhases, transitionBatch } from "@matoolkit/db";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  at,
  batchesOf,
  deactivateAllRunbooks,
  phasesOf,
  publish,
  setSourceMembers,
  startSchedulerHarness,
  takeOutbox,
  type PhaseSpec,
  type SchedulerHarness,
} from "../../test/test-support.ts";

/**
 * 000 "Version Transition Protocol": version N+1 published while a batch runs. The batch starts
 * two days after `now`: pre-checks (T-5d) is already past due and dispatched by the first tick,
 * notice (T-1d) and cutover (T-0) are still ahead.
 */
let harness: SchedulerHarness;
const now = at("2030-06-01T12:00:00Z");
const start = "2030-06-03T12:00:00.000Z";
const later = at("2030-06-01T12:05:00Z");
const phases: PhaseSpec[] = [
  { name: "pre-checks", offset: "T-5d" },
  { name: "notice", offset: "T-1d" },
  { name: "cutover", offset: "T-0" },
];

beforeAll(async () => {
  harness = await startSchedulerHarness();
});

afterAll(async () => {
  await harness?.stop();
});

beforeEach(async () => {
  await deactivateAllRunbooks(harness.db);
  harness.lifecycleCalls.length = 0;
});

/** Version 1 with one batch in flight (pre-checks dispatched), the outbox emptied. */
async function batchOnVersion1(name: string, init = false) {
  const { db } = harness;
  await publish(db, { name, phases, init });
  await setSourceMembers(db, name, [{ upn: "alex@contoso.test", migrationDate: start }]);
  await harness.tickRunbook(name, now);
  const [batch] = await batchesOf(db, name);
  if (init) {
    // Init done (the orchestrator's part): the batch is active and its due phases go out.
    await transitionBatch(db, batch!.id, "activate");
    await harness.tickRunbook(name, now);
  }
  await takeOutbox(db);
  harness.lifecycleCalls.length = 0;
  return batch!;
}

const summary = async (batchId: number) =>
  (await phasesOf(harness.db, batchId)).map((p) => `${p.phaseName}@${p.runbookVersion}:${p.status}`);

describe("overdue_behavior rerun", () => {
  it("supersedes the old pending phases, creates the new version's, and runs the past-due ones again", async () => {
    const { db } = harness;
    const name = "rerun";
    const batch = await batchOnVersion1(name);
    expect(await summary(batch.id)).toEqual([
      "pre-checks@1:dispatched",
      "notice@1:pending",
      "cutover@1:pending",
    ]);
    // A manual batch of the runbook: advanced by an admin, never transitioned by the scheduler.
    const v1 = (await getActiveRunbook(db, name))!;
    const manual = await insertBatch(db, {
      runbookId: v1.id,
      batchStartTime: null,
      isManual: true,
      createdBy: "admin",
    });
    await insertPhases(db, manual.id, [
      { phaseName: "pre-checks", sequence: 0, offsetMinutes: 7200, dueAt: null, runbookVersion: 1 },
    ]);

    const v2 = await publish(db, { name, phases }, { overdueBehavior: "rerun" });
    const outcome = await harness.tickRunbook(name, later);
    expect(outcome).toMatchObject({ ok: true, transitionedBatchIds: [batch.id] });
    expect(await summary(batch.id)).toEqual([
      "pre-checks@1:dispatched",
      "notice@1:superseded",
      "cutover@1:superseded",
      "pre-checks@2:dispatched",
      "notice@2:pending",
      "cutover@2:pending",
    ]);
    const newPhases = (await phasesOf(db, batch.id)).filter((p) => p.runbookVersion === 2);
    expect(newPhases.map((p) => p.dueAt?.toISOString())).toEqual([
      "2030-05-29T12:00:00.000Z",
      "2030-06-02T12:00:00.000Z",
      start,
    ]);
    expect(await takeOutbox(db)).toEqual([
      {
        type: "phase-due",
        messageId: `phase-due:${newPhases[0]!.id}`,
        body: {
          BatchId: batch.id,
          RunbookName: name,
          RunbookVersion: 2,
          PhaseName: "pre-checks",
          PhaseExecutionId: newPhases[0]!.id,
        },
      },
    ]);
    const moved = (await batchesOf(db, name)).find((b) => b.id === batch.id);
    expect(moved).toMatchObject({ runbookId: v2.id, runbookVersion: 2 });
    expect(harness.lifecycleCalls).toEqual([`phases:${batch.id}`]);
    expect(await summary(manual.id)).toEqual(["pre-checks@1:pending"]);

    // Applied once: the next tick changes nothing.
    expect(await harness.tickRunbook(name, later)).toMatchObject({ transitionedBatchIds: [] });
    expect(await summary(batch.id)).toHaveLength(6);
  });
});

describe("overdue_behavior ignore", () => {
  it("skips the new version's past-due phases once; later phases fall due normally", async () => {
    const { db } = harness;
    const name = "ignore";
    const batch = await batchOnVersion1(name);
    await publish(db, { name, phases }, { overdueBehavior: "ignore" });
    await harness.tickRunbook(name, later);
    expect(await summary(batch.id)).toEqual([
      "pre-checks@1:dispatched",
      "notice@1:superseded",
      "cutover@1:superseded",
      "pre-checks@2:skipped",
      "notice@2:pending",
      "cutover@2:pending",
    ]);
    expect(await takeOutbox(db)).toEqual([]);
    expect((await getActiveRunbook(db, name))?.ignoreOverdueApplied).toBe(true);

    // A day later notice is due: dispatched, not skipped.
    await harness.tickRunbook(name, at("2030-06-02T12:00:00Z"));
    expect(await summary(batch.id)).toContain("notice@2:dispatched");
    expect((await takeOutbox(db)).map((m) => m.type)).toEqual(["phase-due"]);
  });
});

describe("rerun_init", () => {
  it("sends batch-init for the new version when the runbook asks for it", async () => {
    const { db } = harness;
    const name = "rerun-init";
    const batch = await batchOnVersion1(name, true);
    await publish(db, { name, phases, init: true }, { rerunInit: true });
    await harness.tickRunbook(name, later);
    const sent = await takeOutbox(db);
    expect(sent.filter((m) => m.type === "batch-init")).toEqual([
      {
        type: "batch-init",
        messageId: `batch-init:${batch.id}:2`,
        body: { BatchId: batch.id, RunbookName: name, RunbookVersion: 2 },
      },
    ]);
  });

  it("does not re-run init when rerun_init is off", async () => {
    const { db } = harness;
    const name = "keep-init";
    await batchOnVersion1(name, true);
    await publish(db, { name, phases, init: true }, { rerunInit: false });
    await harness.tickRunbook(name, later);
    expect((await takeOutbox(db)).map((m) => m.type)).toEqual(["phase-due"]);
  });
});
