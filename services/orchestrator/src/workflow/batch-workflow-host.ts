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
  /** Starts the batch's workflow if it is not running, and nudges it to look at SQL now. */
  batchChanged(batchId: number): Promise<void>;
  /** Resume-from-SQL pass: every unfinished batch gets a running workflow. */
  reconcile(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs the batch workflows on whichever engine the platform chose. The engine may forget its
 * instances (the embedded one lives in memory), so SQL is the source of truth: at start-up and
 * then every `reconcileSeconds`, every batch that is not terminal gets its workflow (re)started.
 */
export async function startBatchWorkflowHost(options: BatchWorkflowHostOptions): Promise<BatchWorkflowHost> {
  const logger = options.logger.child({ component: "batch-workflows" });
  const now = options.now ?? (() => new Date());
  options.engine.register(batchWorkflowDefinition((batchId) => progressBatch(options.db, batchId, now())));
  await options.engine.start();

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

  await reconcile();
  const timer = setInterval(() => void reconcile(), options.reconcileSeconds * 1000);
  timer.unref();

  return {
    async batchChanged(batchId) {
      await ensure(batchId);
      await options.engine.raiseEvent(batchInstanceId(batchId), BATCH_CHANGED_EVENT, {
        at: now().toISOString(),
      });
    },
    reconcile,
    async stop() {
      clearInterval(timer);
      await reconciling;
      await options.engine.stop();
    },
  };
}
