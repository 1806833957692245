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
 * Approval gates (issue 30) on the scheduler's side: a gated phase that falls due at a tick waits
 * in `awaiting_approval` (no phase-due; the batch workflow is nudged, to time the gate out), the
 * phases after it stay pending though due, and a new runbook version supersedes a waiting phase,
 * its own copy of the phase gating again when it falls due.
 */
let harness: SchedulerHarness;
const now = at("2030-06-01T12:00:00Z");
const later = at("2030-06-01T12:05:00Z");
const start = "2030-06-01T11:00:00.000Z";
const phases: PhaseSpec[] = [
  { name: "pre-checks", offset: "T-5d" },
  { name: "cutover", offset: "T-1h", approval: { timeout: "4h" } },
  { name: "cleanup", offset: "T-0" },
];

beforeAll(async () => {
  harness = await startSchedulerHarness();
});

afterAll(async () => {
  await harness?.stop();
});

beforeEach(async () => {
  await deactivateAllRunbooks(harness.db);
});

const summary = async (batchId: number) =>
  (await phasesOf(harness.db, batchId)).map((p) => `${p.phaseName}@${p.runbookVersion}:${p.status}`);

describe("a gated phase falling due at a scheduler tick", () => {
  it("waits for approval without a phase-due, and holds the due phase after it", async () => {
    const { db } = harness;
    const name = "gated";
    await publish(db, { name, phases });
    await setSourceMembers(db, name, [{ upn: "alex@contoso.test", migrationDate: start }]);
    const outcome = await harness.tickRunbook(name, now);
    const [batch] = await batchesOf(db, name);
    const rows = await phasesOf(db, batch!.id);
    // Every phase is due (the batch started an hour ago): only pre-checks goes out.
    expect(outcome).toMatchObject({ ok: true, dispatchedPhaseIds: [rows[0]!.id] });
    expect(await summary(batch!.id)).toEqual([
      "pre-checks@1:dispatched",
      "cutover@1:awaiting_approval",
      "cleanup@1:pending",
    ]);
    expect(rows[1]!.approvalRequired).toBe(true);
    expect(rows[1]!.approvalTimeoutSeconds).toBe(4 * 3600);
    expect(rows[1]!.approvalExpiresAt).not.toBeNull();
    const sent = await takeOutbox(db);
    expect(
      sent.filter((message) => message.type === "phase-due").map((message) => message.messageId),
    ).toEqual([`phase-due:${rows[0]!.id}`]);
    expect(
      sent.some((message) => message.messageId.startsWith(`batch-changed:${batch!.id}:awaiting-approval:`)),
    ).toBe(true);

    // The next tick changes nothing: the gate waits for its decision, cleanup behind it.
    expect(await harness.tickRunbook(name, later)).toMatchObject({ dispatchedPhaseIds: [] });
    expect(await summary(batch!.id)).toEqual([
      "pre-checks@1:dispatched",
      "cutover@1:awaiting_approval",
      "cleanup@1:pending",
    ]);
    expect((await takeOutbox(db)).filter((message) => message.type === "phase-due")).toEqual([]);
  });

  it("is superseded by a new runbook version, whose own copy gates again", async () => {
    const { db } = harness;
    const name = "gated-v2";
    await publish(db, { name, phases });
    await setSourceMembers(db, name, [{ upn: "alex@contoso.test", migrationDate: start }]);
    await harness.tickRunbook(name, now);
    const [batch] = await batchesOf(db, name);
    await takeOutbox(db);

    await publish(db, { name, phases }, { overdueBehavior: "rerun" });
    expect(await harness.tickRunbook(name, later)).toMatchObject({ transitionedBatchIds: [batch!.id] });
    expect(await summary(batch!.id)).toEqual([
      "pre-checks@1:dispatched",
      "cutover@1:superseded",
      "cleanup@1:superseded",
      "pre-checks@2:dispatched",
      "cutover@2:awaiting_approval",
      "cleanup@2:pending",
    ]);
  });
});
