import { getBatch, listBatches, listUnfinishedBatchIds, type Db } from "@matoolkit/db";
import type { Logger, WorkflowEngine } from "@matoolkit/runtime";
import {
  BATCH_CHANGED_EVENT,
  BATCH_WORKFLOW,
  batchInstanceId,
  batchWorkflowDefinition,
  type BatchWorkflowInput,
} from "./batch-workflow.ts";
import { progressBatch } from "./progress-batch.ts";

export interface BatchWorkflowHostOptions {
  readonly db: Db;
  readonly engine: WorkflowEngine;
  readonly logger: Logger;
  /** Longest sleep of a batch workflow before it re-reads SQL. */
  readonly recheckSeconds: number;
  /** How often the host makes sure every unfinished batch has a running workflow. */
  readonly reconcileSeconds: number;
  /** Extra work each reconcile pass does (stuck steps); errors are logged, never fatal. */
  readonly onReconcile?: (now: Date) => Promise<void>;
  readonly now?: () => Date;
}

export interface BatchWorkflowHost {
  /**
   * Starts the engine, then the resume-from-SQL passes (one now, then every `reconcileSeconds`).
   * Call it once the app can be reached, i.e. after `Platform.start()`: up to Dapr 1.17 the
   * sidecar answers no workflow call before the app's port is open (it brings its actors up only
   * then), and Dapr's SDK gives those calls no deadline, so a call before would never return.
   */
  start(): Promise<void>;
  /**
   * Starts the batch's workflow if it is not running, and nudges it to look at SQL now. A paused
   * batch's workflow is suspended instead; a suspended one whose batch runs again is resumed first.
   */
  batchChanged(batchId: number): Promise<void>;
  /** Resume-from-SQL pass: every unfinished batch gets a workflow, suspended while the batch is paused. */
  reconcile(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs the batch workflows on whichever engine the platform chose. The engine may forget its
 * instances (the embedded one lives in memory), so SQL is the source of truth: from `start()` on,
 * and then every `reconcileSeconds`, every batch that is not terminal gets its workflow (re)started.
 * Creating the host registers the workflow and calls nothing on the engine.
 */
export function createBatchWorkflowHost(options: BatchWorkflowHostOptions): BatchWorkflowHost {
  const logger = options.logger.child({ component: "batch-workflows" });
  const now = options.now ?? (() => new Date());
  options.engine.register(batchWorkflowDefinition((batchId) => progressBatch(options.db, batchId, now())));

  const input = (batchId: number): BatchWorkflowInput => ({
    batchId,
    recheckSeconds: options.recheckSeconds,
  });
  const ensure = async (batchId: number) => {
    const started = await options.engine.ensureInstance(
      BATCH_WORKFLOW,
      batchInstanceId(batchId),
      input(batchId),
    );
    if (started) logger.debug({ batchId }, "batch workflow started");
  };

  /**
   * Pause and resume (issue 12) on the engine: a paused batch's workflow is suspended, so its
   * timers (a phase falling due) wait and fire on resume, and any other batch's workflow runs.
   * The engine's suspension is a convenience, not the guard: a paused batch sends nothing
   * because every dispatch reads its status under a share lock (progression.ts), so a workflow
   * left running (a restarted embedded engine before this pass, a lost nudge) does no harm.
   */
  const align = async (batchId: number, paused: boolean) => {
    const instanceId = batchInstanceId(batchId);
    const current = await options.engine.status(instanceId);
    // ensureInstance leaves a running or suspended instance alone, so a suspended one is never
    // restarted or duplicated; one that ended or was forgotten (restart) starts afresh.
    if (current !== "running" && current !== "suspended") await ensure(batchId);
    if (paused && current !== "suspended") {
      await options.engine.suspend(instanceId);
      logger.debug({ batchId }, "batch workflow suspended: batch paused");
    } else if (!paused && current === "suspended") {
      await options.engine.resume(instanceId);
      logger.debug({ batchId }, "batch workflow resumed");
    }
  };

  let reconciling: Promise<void> | undefined;
  const reconcile = () => {
    // One pass at a time: a slow database must not pile passes up.
    reconciling ??= (async () => {
      try {
        const paused = await pausedBatchIds(options.db);
        for (const batchId of await listUnfinishedBatchIds(options.db))
          await align(batchId, paused.has(batchId));
        await options.onReconcile?.(now());
      } catch (error) {
        logger.warn(
          { err: error instanceof Error ? error.message : String(error) },
          "batch workflow reconcile failed",
        );
      } finally {
        reconciling = undefined;
      }
    })();
    return reconciling;
  };

  let timer: NodeJS.Timeout | undefined;
  let starting: Promise<void> | undefined;
  let stopped = false;

  return {
    start() {
      starting ??= (async () => {
        await options.engine.start();
        if (stopped) return;
        await reconcile();
        if (stopped) return;
        timer = setInterval(() => void reconcile(), options.reconcileSeconds * 1000);
        timer.unref();
      })();
      return starting;
    },
    async batchChanged(batchId) {
      const batch = await getBatch(options.db, batchId);
      // A terminal or missing batch: its workflow (resumed if suspended) reads SQL and ends.
      await align(batchId, batch?.status === "paused");
      await options.engine.raiseEvent(batchInstanceId(batchId), BATCH_CHANGED_EVENT, {
        at: now().toISOString(),
      });
    },
    reconcile,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await reconciling;
      // Also ends a start() still waiting for the engine (it then rejects).
      await options.engine.stop();
    },
  };
}

/** Ids of the paused batches (few: an operator paused each), read a page at a time. */
async function pausedBatchIds(db: Db): Promise<Set<number>> {
  const ids = new Set<number>();
  const limit = 1000;
  for (let offset = 0; ; offset += limit) {
    const page = await listBatches(db, { status: "paused", limit, offset });
    for (const batch of page) ids.add(batch.id);
    if (page.length < limit) return ids;
  }
}
