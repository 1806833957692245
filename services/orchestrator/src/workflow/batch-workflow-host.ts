import { listUnfinishedBatchIds, type Db } from "@matoolkit/db";
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
  /** Starts the batch's workflow if it is not running, and nudges it to look at SQL now. */
  batchChanged(batchId: number): Promise<void>;
  /** Resume-from-SQL pass: every unfinished batch gets a running workflow. */
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

  let reconciling: Promise<void> | undefined;
  const reconcile = () => {
    // One pass at a time: a slow database must not pile passes up.
    reconciling ??= (async () => {
      try {
        for (const batchId of await listUnfinishedBatchIds(options.db)) await ensure(batchId);
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
      await ensure(batchId);
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
