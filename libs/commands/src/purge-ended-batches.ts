import {
  DELETED_TABLES,
  deleteBatchRowsChunk,
  listPurgeCandidates,
  markBatchPurged,
  scrubExecutionsChunk,
  scrubMembersChunk,
  type ChunkRange,
  type ChunkResult,
  type Db,
  type PurgeCandidate,
  type PurgeMode,
} from "@matoolkit/db";

/**
 * The retention purge (issue 31 item 2): batches that ended more than `days` ago lose their
 * personal data, chunk by chunk (retention.repository.ts), and are then marked purged with an audit
 * row. Run by the scheduler's daily job and by POST /api/purge (an operator's "run now", or its
 * dry run). Safe to run twice at once or again after a crash: chunks only touch rows still
 * holding data, and only one run marks a batch.
 */
export interface RetentionPolicy {
  /** Batches ended more than this many days ago are purged; at least 1. */
  readonly days: number;
  readonly mode: PurgeMode;
}

export interface PurgeRequest {
  readonly policy: RetentionPolicy;
  readonly now: Date;
  /** List what would be purged; change nothing. */
  readonly dryRun: boolean;
  /** The operator (events.actor of the audit rows); undefined for the daily job. */
  readonly actor?: string;
  /** Rows per statement. */
  readonly chunk?: number;
  /** Batches per run; `more` says when others are due. */
  readonly maxBatches?: number;
}

export interface PurgeReport {
  readonly dryRun: boolean;
  readonly mode: PurgeMode;
  /** Batches that ended before this are due. */
  readonly endedBefore: Date;
  /** Purged now (or, in a dry run, due); a batch another run marked first is left out. */
  readonly batches: readonly PurgeCandidate[];
  /** More batches are due than this run took (maxBatches). */
  readonly more: boolean;
}

export const DEFAULT_PURGE_CHUNK = 500;
export const DEFAULT_PURGE_MAX_BATCHES = 500;
const PAGE = 50;
const DAY_MS = 24 * 60 * 60 * 1000;

export async function purgeEndedBatches(db: Db, request: PurgeRequest): Promise<PurgeReport> {
  const chunk = request.chunk ?? DEFAULT_PURGE_CHUNK;
  const maxBatches = request.maxBatches ?? DEFAULT_PURGE_MAX_BATCHES;
  const endedBefore = new Date(request.now.getTime() - request.policy.days * DAY_MS);
  const batches: PurgeCandidate[] = [];
  let afterId = 0;
  let taken = 0;
  for (;;) {
    const limit = Math.min(PAGE, maxBatches - taken + 1);
    const page = await listPurgeCandidates(db, { endedBefore, limit, afterId });
    for (const candidate of page) {
      if (taken === maxBatches)
        return { dryRun: request.dryRun, mode: request.policy.mode, endedBefore, batches, more: true };
      taken++;
      afterId = candidate.batchId;
      if (request.dryRun || (await purgeBatch(db, candidate, request, chunk))) batches.push(candidate);
    }
    if (page.length < limit) break;
  }
  return { dryRun: request.dryRun, mode: request.policy.mode, endedBefore, batches, more: false };
}

async function purgeBatch(db: Db, candidate: PurgeCandidate, request: PurgeRequest, chunk: number) {
  const { batchId } = candidate;
  if (request.policy.mode === "scrub") {
    await chunkByChunk(batchId, chunk, (range) => scrubMembersChunk(db, range));
    await chunkByChunk(batchId, chunk, (range) => scrubExecutionsChunk(db, "step_executions", range));
    await chunkByChunk(batchId, chunk, (range) => scrubExecutionsChunk(db, "init_executions", range));
  } else {
    for (const table of DELETED_TABLES) {
      await chunkByChunk(batchId, chunk, (range) => deleteBatchRowsChunk(db, table, range));
    }
  }
  return markBatchPurged(db, {
    batchId,
    mode: request.policy.mode,
    members: candidate.members,
    ...(request.actor === undefined ? {} : { actor: request.actor }),
  });
}

/**
 * Runs a chunk statement (each commits on its own) from id 0 upwards until one finds fewer rows
 * than a full chunk: the statements pick only rows still holding data, so that is the end.
 */
async function chunkByChunk(
  batchId: number,
  chunk: number,
  step: (range: ChunkRange) => Promise<ChunkResult>,
): Promise<void> {
  let afterId = 0;
  for (;;) {
    const done = await step({ batchId, afterId, chunk });
    if (done.rows < chunk || done.lastId === null) return;
    afterId = done.lastId;
  }
}
