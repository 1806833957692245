import {
  redriveBatch,
  type RedriveRefusal,
  type RedriveResult,
  type RedriveTarget,
} from "@matoolkit/commands";
import type { Db } from "@matoolkit/db";
import { conflict, notFound } from "../http/api-error.ts";

export type { RedriveResult, RedriveTarget };

/** PostgreSQL's deadlock_detected: the other transaction went ahead; ours can simply run again. */
const DEADLOCK_DETECTED = "40P01";
const ATTEMPTS = 3;

/**
 * POST /api/batches/{id}/redrive (issue 12): one transaction (libs/commands redriveBatch: the
 * members, their failed steps, ended phases and the batch, the member-redriven messages, each
 * change with the operator as actor). A refusal is thrown inside the transaction, so nothing is
 * written: 404 for a batch, member, step or init execution that is not this batch's, 409 with the
 * reason (and `problems` naming each refused member id) otherwise.
 */
export async function redriveBatchCommand(
  db: Db,
  batchId: number,
  target: RedriveTarget,
  actor: string,
): Promise<RedriveResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        const outcome = await redriveBatch(trx, { batchId, target, actor });
        if (!outcome.ok) throw apiErrorOf(outcome.refusal);
        return outcome.result;
      });
    } catch (error) {
      // The redrive locks the batch, then members, steps and phases, as a cancel or a handler
      // does; should PostgreSQL still pick it as a deadlock victim, the next attempt starts over.
      if (attempt < ATTEMPTS && (error as { code?: unknown }).code === DEADLOCK_DETECTED) continue;
      throw error;
    }
  }
}

function apiErrorOf(refusal: RedriveRefusal) {
  switch (refusal.kind) {
    case "not_found":
      return notFound(refusal.message);
    case "conflict":
      return conflict(
        refusal.message,
        refusal.problems === undefined ? undefined : { problems: [...refusal.problems] },
      );
    default: {
      const unreachable: never = refusal.kind;
      throw new Error(`unknown refusal ${String(unreachable)}`);
    }
  }
}
