import { insertInits, listInitsByBatch, lockBatch, transitionBatch } from "@matoolkit/db";
import { batchMachine, type BatchInitMessage } from "@matoolkit/domain";
import { loadBatchInfo, variablesFor } from "../batch-info.ts";
import type { HandlerScope } from "../context.ts";
import { prepareExecution } from "../prepare-execution.ts";
import { advanceInit } from "../progression.ts";

/**
 * 000 BatchInitHandler: create the init executions of this runbook version on demand (once:
 * version-aware, a duplicate message finds them and creates nothing), then dispatch the first.
 */
export async function handleBatchInit(scope: HandlerScope, message: BatchInitMessage): Promise<void> {
  const { trx } = scope;
  // Locked: a batch cancel running now either finishes first (and this sees `cancelled`) or waits
  // for this transaction and then cancels the init steps it created (see cancelBatch).
  await lockBatch(trx, message.BatchId, "update");
  const batch = await loadBatchInfo(trx, message.BatchId);
  if (batch === undefined) {
    scope.logger.warn({ batchId: message.BatchId }, "batch-init for a batch that does not exist: ignored");
    return;
  }
  if (batchMachine.isTerminal(batch.status)) return;
  const runbook = await scope.runbooks.get(trx, batch.runbookName, message.RunbookVersion);
  if (runbook.init.length === 0) {
    await transitionBatch(trx, batch.id, "activate", { reason: "runbook has no init steps" });
    return;
  }
  if (batch.status === "detected") {
    await transitionBatch(trx, batch.id, "dispatch_init", {
      reason: "batch-init received",
      set: { initDispatchedAt: scope.now() },
    });
  }
  const existing = await listInitsByBatch(trx, batch.id, message.RunbookVersion);
  if (existing.length === 0) {
    const variables = variablesFor(batch);
    const rows = runbook.init.map((step, index) => {
      const prepared = prepareExecution(step, index, runbook, variables);
      return { ...prepared, batchId: batch.id, runbookVersion: message.RunbookVersion };
    });
    await insertInits(trx, rows);
  }
  await advanceInit(scope, { batch, runbookVersion: message.RunbookVersion });
}
