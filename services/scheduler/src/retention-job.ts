import { purgeEndedBatches, type RetentionPolicy } from "@matoolkit/commands";
import type { Db } from "@matoolkit/db";
import type { Logger } from "@matoolkit/runtime";

/** Once a day (issue 31 item 2): a timer, so one process runs it and runs never overlap. */
export const RETENTION_PURGE_EVERY_SECONDS = 24 * 60 * 60;

/**
 * The daily purge: every batch ended more than `policy.days` ago loses its personal data
 * (libs/commands purgeEndedBatches), a few hundred batches per run until none is left. Logs the
 * count and the batch ids, never a key or a value. A crash mid-way leaves the batch unmarked: the
 * next run (or the timer's repaired chain at once) starts it again and finds only what is left.
 */
export async function runRetentionPurge(
  db: Db,
  logger: Logger,
  policy: RetentionPolicy,
  now: Date,
): Promise<number> {
  let purged = 0;
  for (;;) {
    const report = await purgeEndedBatches(db, { policy, now, dryRun: false });
    purged += report.batches.length;
    if (report.batches.length > 0) {
      logger.info(
        {
          purgedBatches: report.batches.length,
          batchIds: report.batches.map((batch) => batch.batchId),
          members: report.batches.reduce((sum, batch) => sum + batch.members, 0),
          mode: policy.mode,
          retentionDays: policy.days,
        },
        "retention purge: personal data of ended batches removed",
      );
    }
    if (!report.more) return purged;
  }
}
