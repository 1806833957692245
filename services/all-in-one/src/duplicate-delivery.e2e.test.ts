import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startOrchestratorService, type OrchestratorService } from "@matoolkit/orchestrator";
import { bootPlatform, platformConfigFromEnv, type Platform } from "@matoolkit/platform";
import type { MessageBus } from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import {
  createDiagnosticFunctions,
  createFunctionRegistry,
  startWorkerService,
  type FunctionModule,
  type WorkerService,
} from "@matoolkit/worker";
import { eventually, seedAutomatedBatch } from "../test/test-support.ts";

/**
 * At-least-once delivery at its worst: EVERY message on every subscription (orchestrator events,
 * worker jobs, worker results) reaches its handler twice, both at the same time. A batch with an
 * init step, a step that fails once and is retried, and a polling step must still end with each
 * transition made once and each job run once.
 */
let database: TestDatabase;
let dir: string;
let platform: Platform;
let orchestrator: OrchestratorService;
let worker: WorkerService;
const runs = new Map<string, number>();

/** The real bus, except that each delivery is handed to the handler twice, concurrently. */
function deliveringTwice(bus: MessageBus): MessageBus {
  return {
    ...bus,
    subscribe: (subscription, handler) =>
      bus.subscribe(subscription, async (delivery) => {
        await Promise.all([handler(delivery), handler(delivery)]);
      }),
  };
}

/** The diagnostic functions, counting how often each job actually ran. */
function counted(module: FunctionModule): FunctionModule {
  return Object.fromEntries(
    Object.entries(module).map(([name, fn]) => [
      name,
      async (params: Record<string, unknown>, context: Parameters<typeof fn>[1]) => {
        runs.set(context.jobId, (runs.get(context.jobId) ?? 0) + 1);
        return fn(params, context);
      },
    ]),
  );
}

beforeAll(async () => {
  database = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), "matoolkit-twice-"));
  platform = await bootPlatform(
    platformConfigFromEnv({ DATABASE_URL: database.url, MATOOLKIT_DATA_DIR: dir, LOG_LEVEL: "silent" }),
    "twice",
  );
  const bus = deliveringTwice(platform.bus);
  orchestrator = await startOrchestratorService({
    db: platform.db,
    bus,
    logger: platform.logger,
    workflows: { engine: platform.workflows, recheckSeconds: 30, reconcileSeconds: 30 },
  });
  await orchestrator.startWorkflows();
  worker = await startWorkerService({
    bus,
    idempotency: platform.idempotency,
    logger: platform.logger,
    workerId: "worker-01",
    concurrency: 8,
    jobTimeoutMs: 20_000,
    registry: createFunctionRegistry(counted(createDiagnosticFunctions())),
  });
});

afterAll(async () => {
  await worker?.stop();
  await orchestrator?.stop();
  await platform?.stop();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const yaml = `name: twice
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time_column: StartsAt
init:
  - name: prepare
    worker_id: worker-01
    function: Test-Echo
    params:
      Batch: "{{_batch_id}}"
phases:
  - name: go
    offset: T-0
    steps:
      - name: flaky
        worker_id: worker-01
        function: Test-Flaky
        params:
          FailTimes: 1
        retry:
          max_retries: 2
          interval: 1s
      - name: long-running
        worker_id: worker-01
        function: Test-Poll
        params:
          PendingTimes: 2
        poll:
          interval: 1s
          timeout: 1m
`;

it(
  "makes every transition once and runs every job once when each message arrives twice at the same time",
  { timeout: 60_000 },
  async () => {
    const { db } = platform;
    const members = ["a", "b", "c", "d"].map((key) => `${key}@contoso.test`);
    const batchId = await seedAutomatedBatch(db, {
      name: "twice",
      yaml,
      startsAt: new Date(),
      memberKeys: members,
    });
    await eventually(
      async () => ({
        batch: (
          await db.selectFrom("batches").select("status").where("id", "=", batchId).executeTakeFirstOrThrow()
        ).status,
        inits: await db
          .selectFrom("initExecutions")
          .select(["status", "jobId"])
          .where("batchId", "=", batchId)
          .execute(),
        steps: await db
          .selectFrom("stepExecutions")
          .select(["stepName", "status", "jobId"])
          .where("batchId", "=", batchId)
          .execute(),
      }),
      (state) => state.batch === "completed" || state.batch === "failed",
      "the batch to end",
    );
    const steps = await db
      .selectFrom("stepExecutions")
      .select(["id", "stepName", "status", "retryCount", "pollCount"])
      .where("batchId", "=", batchId)
      .execute();
    expect(steps).toHaveLength(members.length * 2);
    expect(steps.every((step) => step.status === "succeeded")).toBe(true);
    const events = await db
      .selectFrom("events")
      .select(["entity", "entityId", "toStatus"])
      .where("batchId", "=", batchId)
      .orderBy("id")
      .execute();
    const timeline = (entity: string, id: number) =>
      events
        .filter((event) => event.entity === entity && event.entityId === id)
        .map((event) => event.toStatus);
    for (const step of steps) {
      if (step.stepName === "flaky") {
        expect(step.retryCount).toBe(1);
        expect(timeline("step", step.id)).toEqual([
          "dispatched",
          "failed",
          "pending",
          "dispatched",
          "succeeded",
        ]);
      } else {
        expect(step.pollCount).toBe(2);
        expect(timeline("step", step.id)).toEqual(["dispatched", "polling", "succeeded"]);
      }
    }
    const [init] = await db
      .selectFrom("initExecutions")
      .select("id")
      .where("batchId", "=", batchId)
      .execute();
    expect(timeline("init", init!.id)).toEqual(["dispatched", "succeeded"]);
    expect(timeline("batch", batchId)).toEqual(["detected", "init_dispatched", "active", "completed"]);
    // Each job (first attempt, retry, each poll) ran exactly once despite the doubled deliveries.
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    // 1 init + per member: flaky (attempt + retry) + poll step (first dispatch + 2 polls).
    expect(runs.size).toBe(1 + members.length * (2 + 3));
  },
);
