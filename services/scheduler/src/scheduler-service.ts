import { countOpenAlerts, type Db } from "@matoolkit/db";
import type { DataSourceClient } from "@matoolkit/datasources";
import { processMetrics, type Logger, type Metrics, type Timers } from "@matoolkit/runtime";
import { noBatchLifecycle, type BatchLifecycle } from "./batch-lifecycle.ts";
import { sweepDuePolls } from "./poll-sweep.ts";
import { evaluateAlerts } from "./alerts/evaluate-alerts.ts";
import { RETENTION_PURGE_EVERY_SECONDS, runRetentionPurge } from "./retention-job.ts";
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
  /** MATOOLKIT_RETENTION_DAYS (0: off, no purge job) and MATOOLKIT_RETENTION_MODE; default off. */
  readonly retentionDays?: number;
  readonly retentionMode?: "scrub" | "delete";
  /** How often the retention purge runs; default daily (tests shorten it). */
  readonly retentionPurgeSeconds?: number;
  /** How often the alert conditions are evaluated (issue 31); default 60. */
  readonly alertsEvaluateSeconds?: number;
  /** The clock; tests pin it. */
  readonly now?: () => Date;
  /** `matoolkit_scheduler_tick_seconds`; default the process-wide instruments. */
  readonly metrics?: Metrics;
}

/**
 * The scheduler's recurring work on the Timers port (a Dapr job in Dapr mode): the tick and the
 * poll sweep (and, with retention on, the daily purge), each a named timer that runs once across processes and never overlaps itself, so a
 * slow data source delays the next tick instead of running two at once.
 */
export async function startSchedulerService(options: SchedulerOptions): Promise<void> {
  const logger = options.logger.child({ service: "scheduler" });
  const now = options.now ?? (() => new Date());
  const lifecycle = options.lifecycle ?? noBatchLifecycle;
  const metrics = options.metrics ?? processMetrics();
  const { schedulerTick } = metrics;
  await options.timers.scheduleRecurring(
    { name: "scheduler-tick", everySeconds: options.tickSeconds },
    async () => {
      const endTick = schedulerTick.startTimer();
      try {
        await runSchedulerTick(
          { db: options.db, logger, dataSources: options.dataSources, lifecycle },
          now(),
        );
        endTick({ outcome: "ok" });
      } catch (error) {
        endTick({ outcome: "failed" });
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
  const retentionDays = options.retentionDays ?? 0;
  if (retentionDays > 0) {
    const policy = { days: retentionDays, mode: options.retentionMode ?? "scrub" } as const;
    await options.timers.scheduleRecurring(
      {
        name: "scheduler-retention-purge",
        everySeconds: options.retentionPurgeSeconds ?? RETENTION_PURGE_EVERY_SECONDS,
      },
      async () => {
        try {
          await runRetentionPurge(options.db, logger, policy, now());
        } catch (error) {
          // Counts only: a failure's message could quote a value; the next run starts over.
          logger.error({ reason: describeFailure(error) }, "retention purge failed");
        }
      },
    );
  }
  await options.timers.scheduleRecurring(
    { name: "alerts-evaluate", everySeconds: options.alertsEvaluateSeconds ?? 60 },
    async () => {
      try {
        await evaluateAlerts({ db: options.db, logger }, now());
      } catch (error) {
        logger.error({ reason: describeFailure(error) }, "alert evaluation failed");
      }
    },
  );
  // `matoolkit_alerts_open`: the Prometheus rules of the database-only conditions read it.
  metrics.alertsOpen.track(() => countOpenAlerts(options.db));
}
