import type { Db } from "@matoolkit/db";
import type { Logger, Timers } from "@matoolkit/runtime";
import { sweepDuePolls } from "./poll-sweep.ts";

export interface SchedulerOptions {
  readonly db: Db;
  readonly timers: Timers;
  readonly logger: Logger;
  /** How often the poll sweep runs (000: the scheduler tick, every 5 minutes). */
  readonly pollSweepSeconds: number;
}

/**
 * The scheduler's recurring work. So far the poll sweep; data-source discovery of automated
 * batches and phase timing join this service with the scheduler issue.
 */
export async function startSchedulerService(options: SchedulerOptions): Promise<void> {
  const logger = options.logger.child({ service: "scheduler" });
  await options.timers.scheduleRecurring(
    { name: "scheduler-poll-sweep", everySeconds: options.pollSweepSeconds },
    async (firedAt) => {
      const sent = await sweepDuePolls(options.db, firedAt);
      if (sent > 0) logger.info({ pollChecks: sent }, "poll sweep sent poll-checks");
    },
  );
}
