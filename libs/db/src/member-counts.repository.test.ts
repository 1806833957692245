import type { ExecutionEvent } from "@matoolkit/domain";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "./connection.ts";
import {
  countBatchMembers,
  countMembersByStatus,
  countMembersByStatusOfBatches,
} from "./member-counts.repository.ts";
import { transitionMember } from "./members.repository.ts";
import { insertPhases } from "./phases.repository.ts";
import { insertSteps, listStepsByPhase } from "./steps.repository.ts";
import { seedBatch, stepRow, stepThrough } from "../test/test-fixtures.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

const succeed: ExecutionEvent[] = ["dispatch", "succeed"];
const fail: ExecutionEvent[] = ["dispatch", "fail"];
const pollTimeout: ExecutionEvent[] = ["dispatch", "start_polling", "time_out_polling"];

describe("countBatchMembers", () => {
  it("counts each phase's members by outcome and the batch's members by status", async () => {
    const seeded = await seedBatch(db, 9);
    // Two steps per member; the events each member's steps went through.
    const outcomes: Array<[ExecutionEvent[], ExecutionEvent[]]> = [
      [succeed, succeed], // succeeded
      [succeed, fail], // failed
      [pollTimeout, ["cancel"]], // failed: a failure outweighs the cancel after it
      [succeed, ["cancel"]], // cancelled
      [["dispatch"], []], // running
      [succeed, []], // running: its next step is still pending
      [["dispatch", "fail", "retry"], []], // running: waiting for its retry
      [["skip"], ["skip"]], // skipped: its when: conditions skipped every step (issue 30)
      [succeed, ["skip"]], // succeeded: a skipped step counts as done
    ];
    await insertSteps(
      db,
      seeded.members.flatMap((member) => [stepRow(seeded, member, 0), stepRow(seeded, member, 1)]),
    );
    const steps = await listStepsByPhase(db, seeded.phase.id);
    for (const [index, member] of seeded.members.entries()) {
      const mine = steps.filter((step) => step.batchMemberId === member.id);
      await stepThrough(db, mine[0]!.id, outcomes[index]![0]);
      await stepThrough(db, mine[1]!.id, outcomes[index]![1]);
    }
    await transitionMember(db, seeded.members[1]!.id, "fail");
    await transitionMember(db, seeded.members[2]!.id, "fail");
    await transitionMember(db, seeded.members[3]!.id, "remove");
    // A phase nobody has steps in yet, and another batch whose steps must not count.
    const [empty] = await insertPhases(db, seeded.batch.id, [
      { phaseName: "later", sequence: 1, offsetMinutes: 0, dueAt: null, runbookVersion: 1 },
    ]);
    const other = await seedBatch(db, 1);
    await insertSteps(db, [stepRow(other, other.members[0]!, 0)]);

    const counts = await countBatchMembers(db, seeded.batch.id);
    expect(counts.members).toEqual({ active: 6, failed: 2, removed: 1 });
    expect(counts.phases.get(seeded.phase.id)).toEqual({
      succeeded: 2,
      skipped: 1,
      failed: 2,
      cancelled: 1,
      running: 3,
    });
    expect(counts.phases.has(empty!.id)).toBe(false);
    expect(counts.phases.size).toBe(1);
    expect(counts.batchStatus).toBe("detected");
    expect(await countMembersByStatus(db, seeded.batch.id)).toEqual(counts.members);
    // The batch list's counts: several batches in one statement, each its own.
    const listed = await countMembersByStatusOfBatches(db, [seeded.batch.id, other.batch.id, 987_654]);
    expect([...listed]).toEqual([
      [seeded.batch.id, counts.members],
      [other.batch.id, { active: 1, failed: 0, removed: 0 }],
      [987_654, { active: 0, failed: 0, removed: 0 }],
    ]);
    expect(await countMembersByStatusOfBatches(db, [])).toEqual(new Map());
  });

  it("gives zeros for a batch without members or steps", async () => {
    const seeded = await seedBatch(db, 0);
    expect(await countBatchMembers(db, seeded.batch.id)).toEqual({
      members: { active: 0, failed: 0, removed: 0 },
      phases: new Map(),
      batchStatus: "detected",
    });
    expect(await countMembersByStatus(db, seeded.batch.id)).toEqual({ active: 0, failed: 0, removed: 0 });
  });

  it("says there is no such batch with an undefined status", async () => {
    expect((await countBatchMembers(db, 987_654)).batchStatus).toBeUndefined();
  });
});
