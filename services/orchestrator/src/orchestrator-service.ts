import type { Db } from "@matoolkit/db";
import {
  InvalidMessageError,
  NonRetriableError,
  reasonCodes,
  isOrchestratorEventType,
  orchestratorEventSchemas,
  routingProperties,
  workerResultMessageSchema,
  type OrchestratorEvent,
} from "@matoolkit/domain";
import {
  orchestratorEventsSubscription,
  workerResultsSubscription,
  type Delivery,
  type Logger,
  type MessageBus,
  type WorkflowEngine,
} from "@matoolkit/runtime";
import { runFollowUps } from "./completion.ts";
import { emptyFollowUps, type FollowUps, type OrchestratorContext } from "./context.ts";
import { handleBatchInit } from "./handlers/batch-init.ts";
import { handlePollCheck, handleRetryCheck } from "./handlers/checks.ts";
import { handleMemberAdded, handleMemberRemoved } from "./handlers/members.ts";
import { handlePhaseDue } from "./handlers/phase-due.ts";
import { handleWorkerResult } from "./handlers/worker-result.ts";
import { RunbookCache } from "./runbook-cache.ts";
import { timeOutStuckExecutions } from "./stuck-executions.ts";
import { createBatchWorkflowHost } from "./workflow/batch-workflow-host.ts";

export interface OrchestratorOptions {
  readonly db: Db;
  readonly bus: MessageBus;
  readonly logger: Logger;
  readonly concurrency?: number;
  readonly now?: () => Date;
  /** Batch progression (one durable workflow per batch); absent only in handler-level tests. */
  readonly workflows?: {
    readonly engine: WorkflowEngine;
    /** Longest sleep of a batch workflow before it re-reads SQL. */
    readonly recheckSeconds: number;
    /** How often every unfinished batch is checked for a running workflow, and stuck steps swept. */
    readonly reconcileSeconds: number;
  };
}

export type OrchestratorService = OrchestratorContext & {
  /**
   * Starts the workflow engine and the batch workflows (resume from SQL). Call it after
   * `Platform.start()` opened the app port, never before: Dapr up to 1.17 holds every workflow
   * call until that port answers (see BatchWorkflowHost.start). No-op without `workflows`.
   */
  startWorkflows(): Promise<void>;
  stop(): Promise<void>;
};

/**
 * 000 "Orchestrator Internals": two subscriptions, one router per message type, one result
 * processor. Subscribes and registers the batch workflow, and calls nothing on the workflow engine:
 * that is `startWorkflows()`, once the process can be reached.
 */
export async function startOrchestratorService(options: OrchestratorOptions): Promise<OrchestratorService> {
  const logger = options.logger.child({ service: "orchestrator" });
  const now = options.now ?? (() => new Date());
  // The host's periodic reconcile also fails steps stuck in `dispatched` past their timeout
  // (worker.timeout); it needs the context, which needs the host: hence the late binding.
  const late: { context?: OrchestratorContext } = {};
  const host =
    options.workflows === undefined
      ? undefined
      : createBatchWorkflowHost({
          db: options.db,
          logger,
          now,
          ...options.workflows,
          onReconcile: async (at) => {
            if (late.context !== undefined) await timeOutStuckExecutions(late.context, at);
          },
        });
  const ctx: OrchestratorContext = {
    db: options.db,
    logger,
    runbooks: new RunbookCache(),
    now,
    ...(host === undefined ? {} : { batchChanged: (batchId: number) => host.batchChanged(batchId) }),
  };
  late.context = ctx;
  const concurrency = options.concurrency ?? 8;
  await options.bus.subscribe({ ...orchestratorEventsSubscription, concurrency }, (delivery) =>
    handleOrchestratorEvent(ctx, delivery),
  );
  await options.bus.subscribe({ ...workerResultsSubscription, concurrency }, (delivery) =>
    handleResultDelivery(ctx, delivery),
  );
  return {
    ...ctx,
    startWorkflows: async () => host?.start(),
    stop: async () => host?.stop(),
  };
}

export async function handleOrchestratorEvent(ctx: OrchestratorContext, delivery: Delivery): Promise<void> {
  const type = delivery.properties[routingProperties.messageType];
  // A malformed message will never become valid: the bus dead-letters a non-retriable error at
  // once (with this reason) instead of retrying it ten times, and goes on with the next message.
  if (!isOrchestratorEventType(type)) {
    throw new NonRetriableError(
      reasonCodes.messageInvalid,
      `Unknown MessageType ${JSON.stringify(type ?? null).slice(0, 60)} on orchestrator-events`,
    );
  }
  const parsed = orchestratorEventSchemas[type].safeParse(delivery.body);
  if (!parsed.success) {
    throw new InvalidMessageError(`${type} body`, parsed.error);
  }
  await inTransaction(ctx, (trx, followUps) =>
    route(trx, ctx, { type, body: parsed.data } as OrchestratorEvent, followUps),
  );
}

async function handleResultDelivery(ctx: OrchestratorContext, delivery: Delivery): Promise<void> {
  const parsed = workerResultMessageSchema.safeParse(delivery.body);
  if (!parsed.success) {
    throw new InvalidMessageError("worker result", parsed.error);
  }
  await inTransaction(ctx, (trx, followUps) =>
    handleWorkerResult(trx, { ...ctx, db: trx }, parsed.data, followUps),
  );
}

function route(
  trx: Db,
  ctx: OrchestratorContext,
  event: OrchestratorEvent,
  followUps: FollowUps,
): Promise<void> {
  const scoped = { ...ctx, db: trx };
  switch (event.type) {
    case "batch-init":
      return handleBatchInit(trx, scoped, event.body, followUps);
    case "phase-due":
      return handlePhaseDue(trx, scoped, event.body, followUps);
    case "member-added":
      return handleMemberAdded(trx, scoped, event.body, followUps);
    case "member-removed":
      return handleMemberRemoved(trx, scoped, event.body, followUps);
    case "poll-check":
      return handlePollCheck(trx, scoped, event.body, followUps);
    case "retry-check":
      return handleRetryCheck(trx, scoped, event.body, followUps);
    case "batch-changed":
      return ctx.batchChanged?.(event.body.BatchId) ?? Promise.resolve();
    default: {
      const unreachable: never = event;
      throw new Error(`unhandled event ${String(unreachable)}`);
    }
  }
}

/** One transaction per message; completion checks after it commits (see FollowUps). */
async function inTransaction(
  ctx: OrchestratorContext,
  work: (trx: Db, followUps: FollowUps) => Promise<void>,
): Promise<void> {
  const followUps = emptyFollowUps();
  await ctx.db.transaction().execute((trx) => work(trx, followUps));
  await runFollowUps(ctx, followUps);
}
