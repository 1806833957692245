import {
  countBatchMembers,
  countMembersByStatus,
  type BatchMemberCounts,
  type Db,
  type PhaseMemberCounts,
} from "@matoolkit/db";
import { batchMachine, type BatchStatus } from "@matoolkit/domain";

/**
 * Member counts for GET /api/batches/{id} and …/phases. The phase counts aggregate every step of
 * the batch (50,000 for 10,000 members × 5 steps: ~15 ms of database time even index-only), too
 * much to repeat for every reader of a finished batch, whose phase counts no longer change: a
 * batch ends (completed, failed, cancelled) only once no step of it is open, and nothing creates
 * or moves a step of an ended batch (member catch-up and operator adds/removes need a running
 * batch; results for cancelled steps are ignored). So the phase counts of a batch seen ended,
 * read in the same snapshot as its status, are kept for a while and only the members by status
 * (a member-removed message may still be delivered late) are read again. The time limit bounds
 * how stale they could be should a future change move a step of an ended batch.
 */
export interface BatchCountsView {
  readonly members: BatchMemberCounts;
  readonly phases: ReadonlyMap<number, PhaseMemberCounts>;
}

export const ENDED_BATCH_COUNTS_TTL_MS = 60_000;
/** Phase counts are a few numbers per phase: a thousand batches is far below a megabyte. */
export const ENDED_BATCH_COUNTS_MAX = 1_000;

interface Kept {
  readonly phases: ReadonlyMap<number, PhaseMemberCounts>;
  readonly until: number;
}

/** Per database pool: tests run several APIs, on databases whose batch ids overlap, in one process. */
const keptByDb = new WeakMap<Db, Map<number, Kept>>();

/** The batch's counts; undefined when there is no such batch. */
export async function readBatchCounts(
  db: Db,
  batchId: number,
  now: () => number = Date.now,
): Promise<BatchCountsView | undefined> {
  const kept = keptPhaseCounts(db, batchId, now());
  if (kept !== undefined) return { members: await countMembersByStatus(db, batchId), phases: kept };
  const counts = await countBatchMembers(db, batchId);
  if (counts.batchStatus === undefined) return undefined;
  if (hasEnded(counts.batchStatus)) keepPhaseCounts(db, batchId, counts.phases, now());
  return { members: counts.members, phases: counts.phases };
}

function hasEnded(status: BatchStatus): boolean {
  return batchMachine.isTerminal(status);
}

function keptPhaseCounts(
  db: Db,
  batchId: number,
  at: number,
): ReadonlyMap<number, PhaseMemberCounts> | undefined {
  const kept = keptByDb.get(db)?.get(batchId);
  if (kept === undefined) return undefined;
  if (kept.until > at) return kept.phases;
  keptByDb.get(db)?.delete(batchId);
  return undefined;
}

function keepPhaseCounts(
  db: Db,
  batchId: number,
  phases: ReadonlyMap<number, PhaseMemberCounts>,
  at: number,
): void {
  let kept = keptByDb.get(db);
  if (kept === undefined) {
    kept = new Map();
    keptByDb.set(db, kept);
  }
  // A Map iterates in insertion order: the first key is the one kept longest ago.
  if (kept.size >= ENDED_BATCH_COUNTS_MAX && !kept.has(batchId)) kept.delete(kept.keys().next().value!);
  kept.set(batchId, { phases, until: at + ENDED_BATCH_COUNTS_TTL_MS });
}
