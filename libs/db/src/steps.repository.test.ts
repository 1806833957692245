import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "./connection.ts";
import { listEvents } from "./events.repository.ts";
import {
  cancelOpenStepsOfMember,
  countPhaseMemberOutcomes,
  getStep,
  insertSteps,
  listPollingStepsDue,
  listStepsByBatch,
  listStepsByMember,
  listStepsByPhase,
  recordPollDispatch,
  transitionStep,
} from "./steps.repository.ts";
import type { StepExecution } from "./steps.table.ts";
import { seedBatch, stepRow, type SeededBatch } from "../test/test-fixtures.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

async function onlyStep(seeded: SeededBatch): Promise<StepExecution> {
  const [step] = await listStepsByPhase(db, seeded.phase.id);
  if (step === undefined) throw new Error("no step");
  return step;
}

async function dispatchedStep(): Promise<{ seeded: SeededBatch; step: StepExecution }> {
  const seeded = await seedBatch(db, 1);
  await insertSteps(db, [stepRow(seeded, seeded.members[0]!, 0)]);
  const step = await transitionStep(db, (await onlyStep(seeded)).id, "dispatch", {
    set: { jobId: "step-1" },
  });
  if (step === undefined) throw new Error("dispatch lost");
  return { seeded, step };
}

async function stepEvents(seeded: SeededBatch, stepId: number) {
  const events = await listEvents(db, seeded.batch.id, { limit: 100 });
  return events.filter((event) => event.entity === "step" && event.entityId === stepId);
}

describe("insertSteps", () => {
  it("is idempotent: inserting the same steps again creates nothing", async () => {
    const seeded = await seedBatch(db, 2);
    const rows = seeded.members.flatMap((member) => [stepRow(seeded, member, 0), stepRow(seeded, member, 1)]);
    expect(await insertSteps(db, rows)).toBe(4);
    expect(await insertSteps(db, rows)).toBe(0);
    const steps = await listStepsByPhase(db, seeded.phase.id);
    expect(steps.map((step) => [step.batchMemberId, step.stepIndex, step.status])).toEqual([
      [seeded.members[0]!.id, 0, "pending"],
      [seeded.members[0]!.id, 1, "pending"],
      [seeded.members[1]!.id, 0, "pending"],
      [seeded.members[1]!.id, 1, "pending"],
    ]);
    expect(steps[0]!.paramsJson).toEqual({ Identity: "{{Upn}}" });
  });

  it("rejects a step for a member that does not exist", async () => {
    const seeded = await seedBatch(db, 1);
    const row = { ...stepRow(seeded, seeded.members[0]!, 0), batchMemberId: 987_654 };
    await expect(insertSteps(db, [row])).rejects.toThrow(/foreign key/);
  });

  it("lists a member's steps across phases and a batch's steps page by page", async () => {
    const seeded = await seedBatch(db, 2);
    const rows = seeded.members.map((member) => stepRow(seeded, member, 0));
    await insertSteps(db, rows);
    expect(await listStepsByMember(db, seeded.members[1]!.id)).toHaveLength(1);
    const firstPage = await listStepsByBatch(db, seeded.batch.id, { limit: 1, offset: 0 });
    const secondPage = await listStepsByBatch(db, seeded.batch.id, { limit: 1, offset: 1 });
    expect([...firstPage, ...secondPage].map((step) => step.batchMemberId)).toEqual(
      seeded.members.map((member) => member.id),
    );
  });
});

describe("transitionStep", () => {
  it("moves a step along the machine, setting the event's columns and writing one event each", async () => {
    const { seeded, step } = await dispatchedStep();
    expect(step.status).toBe("dispatched");
    expect(step.jobId).toBe("step-1");
    expect(step.dispatchedAt).toBeInstanceOf(Date);
    const succeeded = await transitionStep(db, step.id, "succeed", {
      reason: "worker.success",
      set: { resultJson: [{ Id: "abc" }] },
    });
    expect(succeeded?.status).toBe("succeeded");
    expect(succeeded?.resultJson).toEqual([{ Id: "abc" }]);
    expect(succeeded?.completedAt).toBeInstanceOf(Date);
    const events = await stepEvents(seeded, step.id);
    expect(events.map((event) => [event.fromStatus, event.toStatus, event.reason])).toEqual([
      ["pending", "dispatched", null],
      ["dispatched", "succeeded", "worker.success"],
    ]);
  });

  it("refuses a transition the machine does not allow, and writes nothing", async () => {
    const { seeded, step } = await dispatchedStep();
    await transitionStep(db, step.id, "succeed");
    const before = await stepEvents(seeded, step.id);
    expect(await transitionStep(db, step.id, "dispatch", { set: { jobId: "other" } })).toBeUndefined();
    expect(await transitionStep(db, step.id, "retry")).toBeUndefined();
    const after = await getStep(db, step.id);
    expect(after?.status).toBe("succeeded");
    expect(after?.jobId).toBe("step-1");
    expect(await stepEvents(seeded, step.id)).toHaveLength(before.length);
  });

  it("lets exactly one of several concurrent results win", async () => {
    const { seeded, step } = await dispatchedStep();
    const outcomes = await Promise.all([
      transitionStep(db, step.id, "succeed"),
      transitionStep(db, step.id, "succeed"),
      transitionStep(db, step.id, "fail"),
      transitionStep(db, step.id, "succeed"),
    ]);
    expect(outcomes.filter((outcome) => outcome !== undefined)).toHaveLength(1);
    const finished = (await stepEvents(seeded, step.id)).filter((event) => event.fromStatus === "dispatched");
    expect(finished).toHaveLength(1);
  });

  it("makes a transition that waited for the row lock re-check the committed status", async () => {
    const { seeded, step } = await dispatchedStep();
    let contender: Promise<StepExecution | undefined> | undefined;
    await db.transaction().execute(async (trx) => {
      expect(await transitionStep(trx, step.id, "succeed")).toBeDefined();
      contender = transitionStep(db, step.id, "succeed");
      await waitUntilSomeoneWaitsForALock(trx);
    });
    expect(await contender).toBeUndefined();
    expect(await stepEvents(seeded, step.id)).toHaveLength(2);
  });

  it("retries a failed step: back to pending, one more retry, job id and completion cleared", async () => {
    const { step } = await dispatchedStep();
    await transitionStep(db, step.id, "fail", { set: { errorCode: "graph.throttled", errorMessage: "429" } });
    const retryAfter = new Date("2030-01-01T00:05:00Z");
    const pending = await transitionStep(db, step.id, "retry", { set: { retryAfter } });
    expect(pending).toMatchObject({
      status: "pending",
      retryCount: 1,
      jobId: null,
      completedAt: null,
      retryAfter,
    });
    expect(pending?.errorCode).toBe("graph.throttled");
  });
});

describe("cancelOpenStepsOfMember", () => {
  it("cancels pending, dispatched and polling steps, each with an event, and leaves finished ones", async () => {
    const seeded = await seedBatch(db, 2);
    const [member, other] = seeded.members as [(typeof seeded.members)[0], (typeof seeded.members)[0]];
    await insertSteps(
      db,
      [0, 1, 2, 3, 4].map((index) => stepRow(seeded, member, index)),
    );
    await insertSteps(db, [stepRow(seeded, other, 0)]);
    const steps = await listStepsByMember(db, member.id);
    const [succeeded, failed, dispatched, polling] = steps.map((step) => step.id) as number[];
    for (const id of [succeeded!, failed!, dispatched!, polling!]) await transitionStep(db, id, "dispatch");
    await transitionStep(db, succeeded!, "succeed");
    await transitionStep(db, failed!, "fail");
    await transitionStep(db, polling!, "start_polling");

    const cancelled = await cancelOpenStepsOfMember(db, member.id, "member.removed");

    expect(cancelled).toEqual([dispatched, polling, steps[4]!.id]);
    const statuses = (await listStepsByMember(db, member.id)).map((step) => step.status);
    expect(statuses).toEqual(["succeeded", "failed", "cancelled", "cancelled", "cancelled"]);
    expect((await listStepsByMember(db, other.id))[0]?.status).toBe("pending");
    const events = await listEvents(db, seeded.batch.id, { limit: 100 });
    const cancelEvents = events.filter((event) => event.toStatus === "cancelled");
    expect(cancelEvents.map((event) => [event.entityId, event.fromStatus, event.reason])).toEqual([
      [dispatched, "dispatched", "member.removed"],
      [polling, "polling", "member.removed"],
      [steps[4]!.id, "pending", "member.removed"],
    ]);
  });
});

describe("polling", () => {
  const polledAt = new Date("2030-01-01T10:00:00Z");

  async function pollingStep(): Promise<StepExecution> {
    const seeded = await seedBatch(db, 1);
    await insertSteps(db, [
      stepRow(seeded, seeded.members[0]!, 0, { isPollStep: true, pollIntervalSec: 60 }),
    ]);
    const id = (await onlyStep(seeded)).id;
    await transitionStep(db, id, "dispatch");
    const step = await transitionStep(db, id, "start_polling", {
      set: { pollStartedAt: polledAt, lastPolledAt: polledAt },
    });
    if (step === undefined) throw new Error("start_polling lost");
    return step;
  }

  it("lists a polling step as due exactly when last_polled_at + poll_interval_sec <= now", async () => {
    const step = await pollingStep();
    const dueIds = async (now: Date) => (await listPollingStepsDue(db, now)).map((due) => due.id);
    expect(await dueIds(new Date(polledAt.getTime() + 59_999))).not.toContain(step.id);
    expect(await dueIds(new Date(polledAt.getTime() + 60_000))).toContain(step.id);
    await transitionStep(db, step.id, "succeed");
    expect(await dueIds(new Date(polledAt.getTime() + 120_000))).not.toContain(step.id);
  });

  it("records a poll re-dispatch only while the step is polling", async () => {
    const step = await pollingStep();
    const later = new Date(polledAt.getTime() + 60_000);
    const polled = await recordPollDispatch(db, step.id, { jobId: "step-9-poll-1", lastPolledAt: later });
    expect(polled).toMatchObject({
      status: "polling",
      jobId: "step-9-poll-1",
      lastPolledAt: later,
      pollCount: 1,
    });
    await transitionStep(db, step.id, "time_out_polling");
    expect(await recordPollDispatch(db, step.id, { jobId: "late", lastPolledAt: later })).toBeUndefined();
  });
});

/** Resolves once another session is blocked waiting for a lock (the contender hit our row lock). */
async function waitUntilSomeoneWaitsForALock(trx: Db): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const { rows } = await sql<{ waiting: number }>`
      SELECT count(*)::int AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(trx);
    if ((rows[0]?.waiting ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the contender never waited for the row lock");
}

describe("countPhaseMemberOutcomes", () => {
  it("counts members, those whose every step succeeded, and those still running, in one snapshot", async () => {
    const seeded = await seedBatch(db, 3);
    const [first, second, third] = seeded.members;
    await insertSteps(db, [
      stepRow(seeded, first!, 0),
      stepRow(seeded, first!, 1),
      stepRow(seeded, second!, 0),
      stepRow(seeded, third!, 0),
    ]);
    const steps = await listStepsByPhase(db, seeded.phase.id);
    const finish = async (step: StepExecution, outcome: "succeed" | "fail") => {
      await transitionStep(db, step.id, "dispatch", { set: { jobId: `step-${step.id}` } });
      await transitionStep(db, step.id, outcome, {});
    };
    await finish(steps[0]!, "succeed");
    await finish(steps[2]!, "succeed");
    await finish(steps[3]!, "fail");
    // first: one step succeeded, one still pending; second: succeeded; third: failed.
    expect(await countPhaseMemberOutcomes(db, seeded.phase.id)).toEqual({
      members: 3,
      succeeded: 1,
      failed: 1,
      open: 1,
    });
    await finish(steps[1]!, "succeed");
    expect(await countPhaseMemberOutcomes(db, seeded.phase.id)).toEqual({
      members: 3,
      succeeded: 2,
      failed: 1,
      open: 0,
    });
  });
});
