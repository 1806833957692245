import type { Db } from "@matoolkit/db";
import type { DataSourceClient } from "@matoolkit/datasources";
import type { Logger, Timers } from "@matoolkit/runtime";
import { noBatchLifecycle, type BatchLifecycle } from "./batch-lifecycle.ts";
import { sweepDuePolls } from "./poll-sweep.ts";
import { describeFailure, runSchedulerTick } from "./tick/run-scheduler-tick.ts";

export interface SchedulerOptions {
  readonly db: Db;
  readonly timers: Timers;
  readonly logger: Logger;
  /** Runs each runbook's data_source query (postgres, csv, Dataverse, Databricks). */
  readonly dataSources: DataSourceClient;
  /** Told about created batches and version transitions; the batch workflow connects here. */
  readonly lifecycle?: BatchLifecycle;
  /** How often the poll sweep runs (000: part of the 5-minute tick). */
  readonly pollSweepSeconds: number;
  /** How often data sources are queried and due phases dispatched (000: every 5 minutes). */
  readonly tickSeconds: number;
  /** The clock; tests pin it. */
  readonly now?: () => Date;
}

/**
 * The scheduler's recurring work on the Timers port (a Dapr job in Dapr mode): the tick and the
 * poll sweep, each a named timer that runs once across processes and never overlaps itself, so a
 * slow data source delays the next tick instead of running two at once.
 */
export async function startSchedulerService(options: SchedulerOptions): Promise<void> {
  const logger = options.logger.child({ service: "scheduler" });
  const now = options.now ?? (() => new Date());
  const lifecycle = options.lifecycle ?? noBatchLifecycle;
  await options.timers.scheduleRecurring(
    { name: "scheduler-tick", everySeconds: options.tickSeconds },
    async () => {
      try {
        await runSchedulerTick(
          { db: options.db, logger, dataSources: options.dataSources, lifecycle },
          now(),
        );
      } catch (error) {
        // Only a failure outside any runbook (listing runbooks: the database is down) gets here.
        logger.error({ reason: describeFailure(error) }, "scheduler tick failed");
      }
    },
  );
  await options.timers.scheduleRecurring(
    { name: "scheduler-poll-sweep", everySeconds: options.pollSweepSeconds },
    async () => {
      const sent = await sweepDuePolls(options.db, now());
      if (sent > 0) logger.info({ pollChecks: sent }, "poll sweep sent poll-checks");
    },
  );
}
