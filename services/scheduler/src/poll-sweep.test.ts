import {
  insertBatch,
  insertInits,
  insertMembers,
  insertPhases,
  insertSteps,
  publishRunbook,
  transitionInit,
  transitionStep,
  type Db,
} from "@matoolkit/db";
import { topics } from "@matoolkit/domain";
import {
  createEmbeddedRuntime,
  createLogger,
  declareStaticTopology,
  orchestratorEventsSubscription,
  type Delivery,
} from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { sweepDuePolls } from "./poll-sweep.ts";
import { startSchedulerService } from "./scheduler-service.ts";

/**
 * 000 "Timer Lifecycle" step 3 against real rows: which polling steps and inits get a
 * poll-check, with which message id.
 */
let database: TestDatabase;
let db: Db;
let batchId: number;
let phaseId: number;
let memberIds: number[];
let nextIndex = 0;

const now = new Date("2030-06-01T12:00:00.000Z");
const secondsBefore = (seconds: number) => new Date(now.getTime() - seconds * 1000);

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
  const runbook = await publishRunbook(db, {
    name: "polling",
    yamlContent: "name: polling\n",
    overdueBehavior: "rerun",
    rerunInit: false,
  });
  const batch = await insertBatch(db, {
    runbookId: runbook.id,
    batchStartTime: null,
    isManual: true,
    createdBy: null,
  });
  batchId = batch.id;
  const members = await insertMembers(
    db,
    batchId,
    Array.from({ length: 8 }, (_, index) => ({ memberKey: `m-${index}`, data: {} })),
  );
  memberIds = members.map((member) => member.id);
  const [phase] = await insertPhases(db, batchId, [
    { phaseName: "cutover", sequence: 0, offsetMinutes: 0, dueAt: null, runbookVersion: 1 },
  ]);
  phaseId = phase!.id;
});

afterAll(async () => {
  await database?.drop();
});

beforeEach(async () => {
  // Each test sees only its own rows: earlier ones are moved out of `polling`, the outbox emptied.
  await db.deleteFrom("outbox").execute();
  const polling = await db
    .selectFrom("stepExecutions")
    .select("id")
    .where("status", "=", "polling")
    .execute();
  for (const step of polling) await transitionStep(db, step.id, "succeed");
  const pollingInits = await db
    .selectFrom("initExecutions")
    .select("id")
    .where("status", "=", "polling")
    .execute();
  for (const init of pollingInits) await transitionInit(db, init.id, "succeed");
});

interface PollState {
  readonly lastPolledAt: Date;
  readonly intervalSec: number;
  readonly pollCount: number;
}

/** A step of its own member (one step per member and index), dispatched, then polling as given. */
async function pollingStep(state: PollState | "dispatched"): Promise<number> {
  const stepIndex = nextIndex++;
  await insertSteps(db, [
    {
      batchId,
      phaseExecutionId: phaseId,
      batchMemberId: memberIds[stepIndex % memberIds.length]!,
      stepName: `step-${stepIndex}`,
      stepIndex,
      workerId: "worker-01",
      functionName: "Test-Poll",
      isPollStep: true,
      pollIntervalSec: state === "dispatched" ? 30 : state.intervalSec,
      pollTimeoutSec: 3600,
    },
  ]);
  const step = await db
    .selectFrom("stepExecutions")
    .select("id")
    .where("phaseExecutionId", "=", phaseId)
    .where("stepIndex", "=", stepIndex)
    .executeTakeFirstOrThrow();
  await transitionStep(db, step.id, "dispatch");
  if (state !== "dispatched") {
    await transitionStep(db, step.id, "start_polling", {
      set: { lastPolledAt: state.lastPolledAt, pollCount: state.pollCount },
    });
  }
  return step.id;
}

async function pollingInit(state: PollState): Promise<number> {
  const stepIndex = nextIndex++;
  await insertInits(db, [
    {
      batchId,
      runbookVersion: 1,
      stepName: `init-${stepIndex}`,
      stepIndex,
      workerId: "worker-01",
      functionName: "Test-Poll",
      isPollStep: true,
      pollIntervalSec: state.intervalSec,
      pollTimeoutSec: 3600,
    },
  ]);
  const init = await db
    .selectFrom("initExecutions")
    .select("id")
    .where("batchId", "=", batchId)
    .where("stepIndex", "=", stepIndex)
    .executeTakeFirstOrThrow();
  await transitionInit(db, init.id, "dispatch");
  await transitionInit(db, init.id, "start_polling", {
    set: { lastPolledAt: state.lastPolledAt, pollCount: state.pollCount },
  });
  return init.id;
}

const outbox = () => db.selectFrom("outbox").selectAll().orderBy("id").execute();

describe("sweepDuePolls", () => {
  it("sends one poll-check per polling step or init whose interval has elapsed, none for the others", async () => {
    const overdue = await pollingStep({ lastPolledAt: secondsBefore(600), intervalSec: 60, pollCount: 0 });
    const onTheBoundary = await pollingStep({
      lastPolledAt: secondsBefore(60),
      intervalSec: 60,
      pollCount: 4,
    });
    // A millisecond short of due, and just polled: not yet.
    await pollingStep({ lastPolledAt: secondsBefore(59.999), intervalSec: 60, pollCount: 1 });
    await pollingStep({ lastPolledAt: now, intervalSec: 5, pollCount: 2 });
    await pollingStep("dispatched");
    const dueInit = await pollingInit({ lastPolledAt: secondsBefore(120), intervalSec: 30, pollCount: 2 });
    await pollingInit({ lastPolledAt: secondsBefore(10), intervalSec: 30, pollCount: 0 });

    expect(await sweepDuePolls(db, now)).toBe(3);

    const rows = await outbox();
    expect(rows.map((row) => row.messageId).sort()).toEqual(
      [
        `poll-check:step:${overdue}:1`,
        `poll-check:step:${onTheBoundary}:5`,
        `poll-check:init:${dueInit}:3`,
      ].sort(),
    );
    for (const row of rows) {
      expect(row.topic).toBe(topics.orchestratorEvents);
      expect(row.properties).toEqual({ MessageType: "poll-check" });
      // Due now: no scheduled delivery.
      expect(row.deliverAt).toBeNull();
    }
    const bodies = rows.map((row) => row.body);
    expect(bodies).toContainEqual({ StepExecutionId: overdue, IsInitStep: false });
    expect(bodies).toContainEqual({ StepExecutionId: onTheBoundary, IsInitStep: false });
    expect(bodies).toContainEqual({ StepExecutionId: dueInit, IsInitStep: true });
  });

  it("sends nothing when no poll is due", async () => {
    await pollingStep({ lastPolledAt: now, intervalSec: 60, pollCount: 0 });
    expect(await sweepDuePolls(db, now)).toBe(0);
    expect(await outbox()).toEqual([]);
  });

  it("builds the same ids when it runs twice before the poll happens, and the bus delivers each once", async () => {
    const step = await pollingStep({ lastPolledAt: secondsBefore(300), intervalSec: 60, pollCount: 1 });
    const init = await pollingInit({ lastPolledAt: secondsBefore(300), intervalSec: 60, pollCount: 0 });
    await sweepDuePolls(db, now);
    await sweepDuePolls(db, new Date(now.getTime() + 1000));
    const ids = (await outbox()).map((row) => row.messageId).sort();
    expect(ids).toEqual([
      `poll-check:init:${init}:1`,
      `poll-check:init:${init}:1`,
      `poll-check:step:${step}:2`,
      `poll-check:step:${step}:2`,
    ]);

    const runtime = await createEmbeddedRuntime({
      connectionString: database.url,
      db,
      logger: createLogger({ level: "silent", name: "scheduler-test" }),
      pollingIntervalSeconds: 0.1,
    });
    try {
      await declareStaticTopology(runtime.bus);
      const relay = await runtime.startOutboxRelay();
      await relay.flush();
      const received: Delivery[] = [];
      await runtime.bus.subscribe(
        orchestratorEventsSubscription,
        async (delivery) => void received.push(delivery),
      );
      await vi.waitFor(() => expect(received).toHaveLength(2), { timeout: 10_000 });
      // Give a duplicate the chance to arrive before asserting there is none.
      await new Promise((resolveWait) => setTimeout(resolveWait, 500));
      expect(received.map((delivery) => delivery.id).sort()).toEqual([...new Set(ids)]);
    } finally {
      await runtime.stop();
    }
  });
});

describe("startSchedulerService", () => {
  it("runs the sweep on its recurring timer", async () => {
    const step = await pollingStep({
      lastPolledAt: new Date(Date.now() - 600_000),
      intervalSec: 60,
      pollCount: 0,
    });
    const runtime = await createEmbeddedRuntime({
      connectionString: database.url,
      db,
      logger: createLogger({ level: "silent", name: "scheduler-test" }),
      pollingIntervalSeconds: 0.1,
    });
    try {
      await startSchedulerService({
        db,
        timers: runtime.timers,
        logger: createLogger({ level: "silent", name: "scheduler-test" }),
        // No data source is read here: the tick finds no runbook with automation or batches to sync.
        dataSources: { query: async () => [], rows: async function* () {}, accessProblems: async () => [] },
        pollSweepSeconds: 1,
        tickSeconds: 3600,
      });
      await vi.waitFor(
        async () =>
          expect((await outbox()).map((row) => row.messageId)).toContain(`poll-check:step:${step}:1`),
        { timeout: 10_000, interval: 100 },
      );
    } finally {
      await runtime.stop();
    }
  });
});
