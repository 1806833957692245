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
  type OrchestratorEventType,
  type WorkerResultMessage,
} from "@matoolkit/domain";
import {
  orchestratorEventsSubscription,
  processMetrics,
  workerResultsSubscription,
  type Delivery,
  type Logger,
  type MessageBus,
  type Metrics,
  type TakeDeliveries,
  type WorkflowEngine,
} from "@matoolkit/runtime";
import type { HandlerScope, OrchestratorContext } from "./context.ts";
import { createGroupCommit } from "./group-commit.ts";
import { inHandlerTransaction } from "./handler-transaction.ts";
import { handleBatchInit } from "./handlers/batch-init.ts";
import { handlePollCheck, handleRetryCheck } from "./handlers/checks.ts";
import { handlePollChecks } from "./handlers/poll-checks.ts";
import { handleRetryChecks } from "./handlers/retry-checks.ts";
import { handleMemberAdded, handleMemberRemoved } from "./handlers/members.ts";
import { handleMemberRedriven } from "./handlers/member-redriven.ts";
import {
  continuePhaseStart,
  phaseStartWindowFull,
  DEFAULT_PHASE_START_CHUNK,
  DEFAULT_PHASE_START_WINDOW,
  handlePhaseDue,
} from "./handlers/phase-due.ts";
import { createPhaseStartPump } from "./phase-start-pump.ts";
import { resultOutcome } from "./handlers/worker-result.ts";
import { handleWorkerResults } from "./handlers/worker-results.ts";
import { RunbookCache } from "./runbook-cache.ts";
import { resendStalledJobs } from "./stalled-jobs.ts";
import { timeOutStuckExecutions } from "./stuck-executions.ts";
import { createBatchWorkflowHost } from "./workflow/batch-workflow-host.ts";
import { lockBatchInfosOfExecutions } from "./batch-info.ts";
import { refFromCorrelation } from "./executions.ts";
import { startNotifier, type NotifierOptions } from "./notifications/notifier.ts";
import type { EmailNotifier } from "./notifications/email-notifier.ts";
import type { SecretKeyring } from "@matoolkit/platform";

export interface OrchestratorOptions {
  readonly db: Db;
  readonly bus: MessageBus;
  readonly logger: Logger;
  readonly concurrency?: number;
  readonly now?: () => Date;
  /** Members whose phase steps are created and started per transaction (default 500). */
  readonly phaseStartChunk?: number;
  /** Steps of a phase out with workers before its next chunk waits (see handlePhaseDue). */
  readonly phaseStartWindow?: number;
  /** Counts recorded worker results (`matoolkit_step_results_total`); default the process-wide ones. */
  readonly metrics?: Metrics;
  /** Webhook delivery settings (issue 12); the notifier always runs, these only tune it (tests). */
  readonly notifier?: NotifierOptions;
  /** Opens webhook secrets (sealed at rest) at send time; without it no webhook is sent (compose.ts passes it). */
  readonly secrets?: SecretKeyring;
  /** Email notifications (MATOOLKIT_NOTIFY_EMAIL=on, issue 31 item 7): the sender and its Graph client. */
  readonly mail?: EmailNotifier;
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
  // (worker.timeout) and sends the jobs of those waiting long again; it needs the context, which
  // needs the host: hence the late binding.
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
            if (late.context === undefined) return;
            await timeOutStuckExecutions(late.context, at);
            // Jobs that may have been lost on the way go out again, long before their timeout.
            await resendStalledJobs(late.context, at);
            // A phase start whose nudges were lost with a stopped process goes on from here.
            await late.context.phaseStarts?.nudgeStalled();
          },
        });
  const ctx: OrchestratorContext = {
    db: options.db,
    logger,
    runbooks: new RunbookCache(),
    now,
    phaseStartChunk: options.phaseStartChunk ?? DEFAULT_PHASE_START_CHUNK,
    phaseStartWindow: options.phaseStartWindow ?? DEFAULT_PHASE_START_WINDOW,
    phaseStarts: createPhaseStartPump({
      db: options.db,
      logger,
      // Most nudges find the window full: one unlocked count says so without a transaction (a
      // nudge never starts members that have steps already, so that part needs no look here).
      continueStart: async (phaseExecutionId) =>
        (await phaseStartWindowFull(options.db, phaseExecutionId, ctx))
          ? "waiting"
          : inHandlerTransaction(ctx, (scope) => continuePhaseStart(scope, { phaseExecutionId })),
    }),
    ...(options.bus.publishInTransaction === undefined
      ? {}
      : { publishInTransaction: options.bus.publishInTransaction }),
    ...(host === undefined ? {} : { batchChanged: (batchId: number) => host.batchChanged(batchId) }),
  };
  late.context = ctx;
  const concurrency = options.concurrency ?? 8;
  const { stepResults } = options.metrics ?? processMetrics();
  await options.bus.subscribe({ ...orchestratorEventsSubscription, concurrency }, (delivery) =>
    handleOrchestratorEvent(ctx, delivery),
  );
  if (options.bus.consumeInTransaction !== undefined) {
    // Retry and poll checks are most of this topic's messages once steps retry or poll (a
    // polling step sends one per interval until it completes), each alone was a transaction of
    // its own with a fetch before and a delete after. The embedded bus hands them out in batches
    // inside one transaction, in the order they fall due; the subscription above takes the other
    // events (and may take a check too, handled the same way). Up to four batches at once while
    // they come back full: a batch's poll checks go one after the other, and one batch at a time
    // fell behind when hundreds fell due together.
    await options.bus.consumeInTransaction(
      {
        ...orchestratorEventsSubscription,
        batchSize: CHECKS_PER_TRANSACTION,
        batchesAtOnce: CHECK_BATCHES_AT_ONCE,
        only: { property: routingProperties.messageType, values: selfCheckTypes },
        commitAsynchronously: true,
      },
      (take) => takeSelfChecks(ctx, take),
      (delivery) => handleOrchestratorEvent(ctx, delivery),
    );
  }
  // Results are many and alike: the deliveries in flight at once are processed as one batch in
  // one transaction (handleWorkerResults), so more of them in flight means fewer transactions.
  const results = createGroupCommit<WorkerResultMessage>({
    maxItems: RESULTS_PER_TRANSACTION,
    flush: async (batch) => {
      await processWorkerResults(ctx, batch);
      // Counted once committed: a failed transaction's results come again and count then.
      for (const result of batch) {
        const { outcome, reasonCode } = resultOutcome(result);
        stepResults.inc({ outcome, reason_code: reasonCode });
      }
    },
  });
  const oneResult = (delivery: Delivery): Promise<void> => results.submit(parseResult(delivery));
  if (options.bus.consumeInTransaction === undefined) {
    await options.bus.subscribe(
      { ...workerResultsSubscription, concurrency: Math.max(concurrency, RESULTS_IN_FLIGHT) },
      oneResult,
    );
  } else {
    // The embedded bus hands a batch of results out inside their transaction: taken, applied and
    // removed from the queue in one commit (issue 29; no fetch marking them taken, no delete after).
    await options.bus.consumeInTransaction(
      // Without the flush (TransactionalSubscription.commitAsynchronously): these transactions write
      // and publish in the database only, and the follow-ups after them do the same; every effect
      // outside it (a worker's Graph call, a webhook) follows a synchronous commit of its own (the
      // worker's fetch and claim, the notifier's fetch), which makes this one durable first.
      { ...workerResultsSubscription, batchSize: RESULTS_PER_TRANSACTION, commitAsynchronously: true },
      (take) => takeWorkerResults(ctx, take, stepResults),
      oneResult,
    );
  }
  // Webhook notifications (issue 12): the notifications topic, on its own subscription.
  const notifier = await startNotifier(
    {
      db: options.db,
      bus: options.bus,
      logger,
      secrets: options.secrets,
      ...(options.mail === undefined ? {} : { mail: options.mail }),
    },
    options.notifier,
  );
  return {
    ...ctx,
    startWorkflows: async () => host?.start(),
    stop: async () => {
      notifier.stop();
      await host?.stop();
      await ctx.phaseStarts?.idle();
    },
  };
}

export async function handleOrchestratorEvent(ctx: OrchestratorContext, delivery: Delivery): Promise<void> {
  const event = parseOrchestratorEvent(delivery);
  if (event.type === "batch-changed") {
    // A nudge for the workflow host: no transaction of its own.
    await ctx.batchChanged?.(event.body.BatchId);
    return;
  }
  await inHandlerTransaction(ctx, (scope) => route(scope, event));
}

/** The orchestrator's own delayed checks (000 "Retry Protocol", "Polling Protocol"). */
const selfCheckTypes = ["retry-check", "poll-check"] as const satisfies readonly OrchestratorEventType[];
/**
 * Checks handled in one transaction at most. Retries and polls are set-based, so a batch costs
 * about the same statements whatever its size; the cap bounds how many steps' locks one
 * transaction holds until it commits, as RESULTS_PER_TRANSACTION does for results. Failures
 * handled together schedule their retries for the same moment, so checks fall due in bursts.
 */
const CHECKS_PER_TRANSACTION = 64;
/** Batches of checks in flight at once while they come back full (each its own connection). */
const CHECK_BATCHES_AT_ONCE = 4;

/**
 * One batch of retry and poll checks taken inside their transaction, after their batches were
 * share-locked together: set-based, the retry checks (handleRetryChecks) then the poll checks
 * (handlePollChecks), each deciding what its one-check handler decides, for all at once. A check
 * that throws fails the batch, and then every check of it goes one by one
 * (consumeInTransaction's fallback), where it fails alone; the followUps of all of them run
 * after the one commit.
 */
async function takeSelfChecks(ctx: OrchestratorContext, take: TakeDeliveries): Promise<void> {
  await inHandlerTransaction(ctx, async (scope) => {
    const checks = (await take(scope.trx)).map(parseOrchestratorEvent).map((event) => {
      if (event.type !== "retry-check" && event.type !== "poll-check")
        throw new Error(`a ${event.type} event was taken as a check`);
      return event;
    });
    if (checks.length === 0) return;
    // Every check's batch share-locked first, in one statement, before any execution row: the
    // order a pause or cancel takes them (docs/architecture-operations.md), which a second check's
    // own batch lock, taken after the first check locked its execution, would break.
    const batches = await lockBatchInfosOfExecutions(
      scope.trx,
      checks.map((check) => refFromCorrelation(check.body.IsInitStep, check.body.StepExecutionId)),
    );
    // Retries, then polls, set-based (handlers/retry-checks.ts, handlers/poll-checks.ts).
    await handleRetryChecks(
      scope,
      checks.flatMap((check) => (check.type === "retry-check" ? [check.body] : [])),
      batches,
    );
    await handlePollChecks(
      scope,
      checks.flatMap((check) => (check.type === "poll-check" ? [check.body] : [])),
      batches,
    );
  });
}

/** A delivery of orchestrator-events as its typed event; a malformed one is non-retriable. */
function parseOrchestratorEvent(delivery: Delivery): OrchestratorEvent {
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
  return { type, body: parsed.data } as OrchestratorEvent;
}

/** Worker results handled together in one transaction (see handleWorkerResults). */
const RESULTS_PER_TRANSACTION = 128;
/** Result deliveries taken at once, so a group commit has a group to commit. */
const RESULTS_IN_FLIGHT = 128;

function parseResult(delivery: Delivery): WorkerResultMessage {
  const parsed = workerResultMessageSchema.safeParse(delivery.body);
  if (!parsed.success) throw new InvalidMessageError("worker result", parsed.error);
  return parsed.data;
}

/**
 * One batch of results taken inside their transaction (MessageBus.consumeInTransaction): the
 * deliveries parsed there, so a malformed one fails the batch and is then dead-lettered alone
 * on the one-by-one path (with the others through it as well).
 */
async function takeWorkerResults(
  ctx: OrchestratorContext,
  take: TakeDeliveries,
  stepResults: Metrics["stepResults"],
): Promise<void> {
  const batch = await inHandlerTransaction(ctx, async (scope) => {
    const taken = (await take(scope.trx)).map(parseResult);
    if (taken.length > 0) await handleWorkerResults(scope, taken);
    return taken;
  });
  for (const result of batch) {
    const { outcome, reasonCode } = resultOutcome(result);
    stepResults.inc({ outcome, reason_code: reasonCode });
  }
}

/** One transaction for the results, then the completion checks they asked for. */
export function processWorkerResults(
  ctx: OrchestratorContext,
  results: readonly WorkerResultMessage[],
): Promise<void> {
  return inHandlerTransaction(ctx, (scope) => handleWorkerResults(scope, results));
}

function route(
  scope: HandlerScope,
  event: Exclude<OrchestratorEvent, { type: "batch-changed" }>,
): Promise<void> {
  switch (event.type) {
    case "batch-init":
      return handleBatchInit(scope, event.body);
    case "phase-due":
      return handlePhaseDue(scope, event.body);
    case "member-added":
      return handleMemberAdded(scope, event.body);
    case "member-removed":
      return handleMemberRemoved(scope, event.body);
    case "member-redriven":
      return handleMemberRedriven(scope, event.body);
    case "poll-check":
      return handlePollCheck(scope, event.body);
    case "retry-check":
      return handleRetryCheck(scope, event.body);
    default: {
      const unreachable: never = event;
      throw new Error(`unhandled event ${String(unreachable)}`);
    }
  }
}
