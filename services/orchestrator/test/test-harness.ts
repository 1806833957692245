import { randomBytes } from "node:crypto";
import { createDb, type Db } from "@matoolkit/db";
import {
  routingProperties,
  topics,
  type OrchestratorEventType,
  type PhaseDueMessage,
  type WorkerResultMessage,
} from "@matoolkit/domain";
import {
  createDurableTaskWorkflowEngine,
  createEmbeddedRuntime,
  createLogger,
  declareStaticTopology,
  declareWorkerPools,
  type EmbeddedRuntime,
  type MessageBus,
} from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { createFunctionRegistry, startWorkerService, type WorkerService } from "@matoolkit/worker";
import { emptyFollowUps, type OrchestratorContext } from "../src/context.ts";
import { handlePhaseDue } from "../src/handlers/phase-due.ts";
import { handlerScope } from "../src/handler-transaction.ts";
import type { NotifierOptions } from "../src/notifications/notifier.ts";
import type { EmailNotifier } from "../src/notifications/email-notifier.ts";
import { SecretKeyring, secretKeyOf } from "@matoolkit/platform";
import {
  handleOrchestratorEvent,
  processWorkerResults,
  startOrchestratorService,
} from "../src/orchestrator-service.ts";
import { createScenarioFunctions, type WorkerCall } from "./test-worker-functions.ts";

export * from "./test-seed.ts";
export type { WorkerCall } from "./test-worker-functions.ts";

/**
 * The orchestrator assembled as in production (real PostgreSQL, embedded bus, outbox relay, a
 * real worker) for scenario tests. Every worker function call is recorded, so a test can count
 * jobs; `Hold` blocks until its gate opens, so a test controls when a step answers.
 */
export const WORKER_ID = "worker-01";

export interface Harness {
  /** The test database's own pool, for assertions. */
  readonly db: Db;
  readonly bus: MessageBus;
  readonly orchestrator: OrchestratorContext;
  /**
   * Every orchestrator on the database: `orchestrator` first, then those HarnessOptions.orchestrators
   * asked for, each on an embedded runtime of its own (its pool, pg-boss, outbox relay), as a
   * second process would be.
   */
  readonly orchestrators: readonly OrchestratorContext[];
  /** Seals the secrets of webhooks a test inserts directly (the notifier opens them with it). */
  readonly secrets: SecretKeyring;
  /** Every worker function invocation, in call order. */
  readonly calls: WorkerCall[];
  /** Opens the gate a `Hold` step waits on (params `Gate`). */
  open(gate: string): void;
  /**
   * Declares worker pool `workerId` and starts a worker for it (same functions and calls). Jobs
   * published for a pool before it exists are dropped by the bus: how a test loses a job.
   */
  startWorker(workerId: string): Promise<void>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /** Webhook delivery settings (short backoff, a test clock) for notification scenarios. */
  readonly notifier?: NotifierOptions;
  /** The webhook secrets key; default a fresh random one (Harness.secrets). */
  readonly secrets?: SecretKeyring;
  /** Email notifications (issue 31 item 7): the sender and a Graph client (the simulated tenant's). */
  readonly mail?: EmailNotifier;
  /** Orchestrator processes consuming the same bus and database (default 1). */
  readonly orchestrators?: number;
  /**
   * The first orchestrator also hosts the batch workflows (the in-process engine, as embedded
   * mode runs it: one host per database), so phases fall due by themselves; default none, the
   * test sends phase-due.
   */
  readonly workflowHost?: boolean;
  /**
   * Steps of a phase out with the worker before its next chunk of members waits for results
   * (handlePhaseDue); default 1,000, more than any scenario's members, so gates that hold every
   * member at once can. phase-chunks.scenarios.test.ts runs with 2.
   */
  readonly phaseStartWindow?: number;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const database: TestDatabase = await createTestDatabase();
  const secrets = options.secrets ?? new SecretKeyring(secretKeyOf(randomBytes(32)));
  const logger = createLogger({ level: (process.env.TEST_LOG_LEVEL ?? "silent") as "silent", name: "test" });
  // The services get a pool of their own, sized like a service's: the relay needs two connections
  // per pass and the orchestrator one per concurrent handler.
  const serviceDb = createDb({ connectionString: database.url, maxConnections: 20 });
  let runtime: EmbeddedRuntime | undefined;
  let worker: WorkerService | undefined;
  const others: Array<{ runtime?: EmbeddedRuntime; db: Db }> = [];
  const stopOthers = async () => {
    for (const other of others) {
      await other.runtime?.stop();
      await other.db.destroy();
    }
  };
  try {
    runtime = await createEmbeddedRuntime({
      connectionString: database.url,
      db: serviceDb,
      logger,
      pollingIntervalSeconds: 0.1,
      retryDelaySeconds: 0,
      retryBackoff: false,
    });
    await declareStaticTopology(runtime.bus);
    await declareWorkerPools(runtime.bus, [WORKER_ID]);
    await runtime.startOutboxRelay({ pollIntervalMs: 100 });
    // Phase steps created 2 members per transaction: every scenario with 3+ members goes through
    // the chunked start and its later chunks (production: 500).
    const orchestrator = await startOrchestratorService({
      db: serviceDb,
      bus: runtime.bus,
      logger,
      phaseStartChunk: 2,
      phaseStartWindow: options.phaseStartWindow ?? 1_000,
      secrets,
      ...(options.notifier === undefined ? {} : { notifier: options.notifier }),
      ...(options.mail === undefined ? {} : { mail: options.mail }),
      ...(options.workflowHost === true
        ? {
            workflows: {
              engine: createDurableTaskWorkflowEngine({ logger, idlePollMs: 10 }),
              recheckSeconds: 1,
              reconcileSeconds: 1,
            },
          }
        : {}),
    });
    const orchestrators: OrchestratorContext[] = [orchestrator];
    for (let index = 1; index < (options.orchestrators ?? 1); index += 1) {
      const other: { runtime?: EmbeddedRuntime; db: Db } = {
        db: createDb({ connectionString: database.url, maxConnections: 10 }),
      };
      others.push(other);
      other.runtime = await createEmbeddedRuntime({
        connectionString: database.url,
        db: other.db,
        logger,
        pollingIntervalSeconds: 0.1,
        retryDelaySeconds: 0,
        retryBackoff: false,
      });
      await other.runtime.startOutboxRelay({ pollIntervalMs: 100 });
      orchestrators.push(
        await startOrchestratorService({
          db: other.db,
          bus: other.runtime.bus,
          logger,
          phaseStartChunk: 2,
          phaseStartWindow: options.phaseStartWindow ?? 1_000,
          secrets,
          ...(options.notifier === undefined ? {} : { notifier: options.notifier }),
        }),
      );
    }
    const functions = createScenarioFunctions();
    worker = await startWorkerService({
      bus: runtime.bus,
      idempotency: runtime.idempotency,
      logger,
      workerId: WORKER_ID,
      concurrency: 16,
      jobTimeoutMs: 20_000,
      registry: createFunctionRegistry(functions.module),
    });
    await orchestrator.startWorkflows();
    const started = { runtime, worker };
    const lateWorkers: WorkerService[] = [];
    return {
      db: database.db,
      bus: runtime.bus,
      orchestrator,
      orchestrators,
      secrets,
      calls: functions.calls,
      open: functions.open,
      startWorker: async (workerId) => {
        await declareWorkerPools(started.runtime.bus, [workerId]);
        lateWorkers.push(
          await startWorkerService({
            bus: started.runtime.bus,
            idempotency: started.runtime.idempotency,
            logger,
            workerId,
            concurrency: 4,
            jobTimeoutMs: 20_000,
            registry: createFunctionRegistry(functions.module),
          }),
        );
      },
      stop: async () => {
        await orchestrator.stop();
        await started.worker.stop();
        for (const late of lateWorkers) await late.stop();
        await stopOthers();
        await started.runtime.stop();
        await serviceDb.destroy();
        await database.drop();
      },
    };
  } catch (error) {
    await worker?.stop();
    await stopOthers();
    await runtime?.stop();
    await serviceDb.destroy();
    await database.drop();
    throw error;
  }
}

/** Publishes to `orchestrator-events` as the scheduler or the admin API would. */
export async function publishEvent(
  bus: MessageBus,
  type: OrchestratorEventType,
  body: Record<string, unknown>,
  messageId: string,
): Promise<void> {
  await bus.publish({
    id: messageId,
    topic: topics.orchestratorEvents,
    properties: { [routingProperties.messageType]: type },
    body,
  });
}

/** Runs the orchestrator's event handler on this process, as a delivery would. */
export function deliverEvent(
  ctx: OrchestratorContext,
  type: OrchestratorEventType,
  body: Record<string, unknown>,
  messageId: string,
): Promise<void> {
  return handleOrchestratorEvent(ctx, {
    id: messageId,
    topic: topics.orchestratorEvents,
    properties: { [routingProperties.messageType]: type },
    body,
    deliveryCount: 1,
  });
}

/**
 * phase-due's own transaction only: the phase dispatched and its first chunk created and started,
 * the follow-ups (the next chunks) dropped, as a crash right after the commit would drop them.
 */
export async function phaseDueFirstChunkOnly(
  ctx: OrchestratorContext,
  body: Record<string, unknown>,
): Promise<void> {
  await ctx.db
    .transaction()
    .execute((trx) => handlePhaseDue(handlerScope(ctx, trx, emptyFollowUps()), body as PhaseDueMessage));
}

/** Runs the result processor on this process exactly as the worker-results subscription does. */
export function deliverResult(ctx: OrchestratorContext, result: WorkerResultMessage): Promise<void> {
  return processWorkerResults(ctx, [result]);
}

/** Polls `read` until `done` holds (bounded): outcomes are awaited, never slept for. */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
