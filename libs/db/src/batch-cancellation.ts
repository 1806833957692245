import type { Batch } from "./batches.table.ts";
import { transitionBatch } from "./batches.repository.ts";
import type { Db } from "./connection.ts";
import { cancelOpenInitsOfBatch } from "./inits.repository.ts";
import { inTransaction } from "./in-transaction.ts";
import { cancelOpenPhasesOfBatch } from "./phases.repository.ts";
import { cancelOpenStepsOfBatch } from "./steps.repository.ts";

export interface BatchCancellation {
  readonly batch: Batch;
  /** Ids of what this cancel moved to `cancelled`. */
  readonly phaseIds: number[];
  readonly stepIds: number[];
  readonly initIds: number[];
}

/**
 * Cancels a batch: the batch, then every pending or dispatched phase, then every open step and
 * init execution, each a guarded transition with its event, all in ONE transaction (the caller's
 * when it passes one). Undefined when the batch does not exist or is already terminal.
 *
 * The order is what makes it safe beside running handlers. The batch row is locked first:
 * handlers that create executions lock it too (lockBatch) and either finish before the cancel
 * reads the steps or wait and then see `cancelled`. phase-due locks its phase instead, which the
 * phase statement waits for. Each statement reads afresh (READ COMMITTED), so steps committed
 * meanwhile are seen and cancelled; a result racing on an existing step either commits first
 * (its next step is then cancelled here) or waits for this row lock and finds the step terminal.
 */
export async function cancelBatch(
  db: Db,
  batchId: number,
  reason: string,
  options: { readonly actor?: string } = {},
): Promise<BatchCancellation | undefined> {
  return inTransaction(db, async (trx) => {
    // Only the batch's own event names the operator: the phases and steps it ends are the
    // cancel's consequences (reason batch.cancelled), and the audit trail lists the action once.
    const batch = await transitionBatch(trx, batchId, "cancel", { reason, actor: options.actor });
    if (batch === undefined) return undefined;
    const phases = await cancelOpenPhasesOfBatch(trx, batchId, reason);
    const stepIds = await cancelOpenStepsOfBatch(trx, batchId, reason);
    const initIds = await cancelOpenInitsOfBatch(trx, batchId, reason);
    return { batch, phaseIds: phases.map((phase) => phase.id), stepIds, initIds };
  });
}
