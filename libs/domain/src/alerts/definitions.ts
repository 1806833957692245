/**
 * The alert conditions (issue 31): one list, from which everything else is derived. The
 * scheduler's evaluator (services/scheduler/src/alerts) raises and resolves `alerts` rows for the
 * conditions with an in-process evaluation; `npm run alerts:generate` writes the Helm chart's
 * PrometheusRule and the ACA Bicep's Azure Monitor rules from the same entries, so the three can
 * never disagree on ids, severities or thresholds.
 *
 * Thresholds are constants here (not settings): an operator who wants other values edits this
 * file and regenerates, and the system, the Prometheus rules and the Azure rules change together.
 */

export const alertSeverities = ["critical", "warning"] as const;
export type AlertSeverity = (typeof alertSeverities)[number];

/**
 * Public ids (webhook payloads, GET /api/alerts, rule labels): only ever added, never renamed or
 * removed, like the notification types; rows of a condition stay readable for as long as they exist.
 */
export const alertConditionIds = [
  "source-failing",
  "dead-letters",
  "steps-past-timeout",
  "throttled-share",
  "phase-not-dispatched",
  "no-live-worker",
  "batch-failed",
] as const;
export type AlertConditionId = (typeof alertConditionIds)[number];

/** An Azure Monitor log alert (scheduledQueryRules over the environment's Log Analytics workspace). */
export interface AzureLogAlert {
  /** KQL over ContainerAppConsoleLogs_CL; the rule fires when it returns at least one row. */
  readonly query: string;
  readonly frequencyMinutes: number;
  readonly windowMinutes: number;
}

export interface AlertDefinition {
  readonly id: AlertConditionId;
  readonly severity: AlertSeverity;
  /** One line, for the banner, the CLI and the rules' summary annotation. */
  readonly summary: string;
  readonly description: string;
  readonly thresholds: Readonly<Record<string, number>>;
  /** What the evaluator checks in the database; null: not knowable there (see `whyNotInProcess`). */
  readonly inProcess: string | null;
  readonly whyNotInProcess?: string;
  /** A Prometheus alerting rule over the metrics the services export. */
  readonly prometheus: { readonly expr: string; readonly for: string };
  /** null: no Azure rule (see `whyNotAzure`). */
  readonly azure: AzureLogAlert | null;
  readonly whyNotAzure?: string;
}

/** Thresholds, by condition; the SQL, the PromQL and the KQL below all read these. */
export const alertThresholds = {
  sourceFailingTicks: 3,
  deadLetterWindowSeconds: 24 * 3600,
  /** Past the step's own timeout: the orchestrator's reconcile should have failed it by then. */
  stepTimeoutGraceSeconds: 600,
  throttledShare: 0.2,
  throttledWindowSeconds: 900,
  /** Fewer results than this in the window say nothing about a share. */
  throttledMinResults: 20,
  /** Three 5-minute ticks: one missed tick is not yet a problem. */
  phaseDueGraceSeconds: 900,
  workerAbsentSeconds: 300,
  batchFailedWindowSeconds: 24 * 3600,
} as const;

const t = alertThresholds;

/**
 * The open alerts of a condition as the scheduler exports them (`matoolkit_alerts_open`, read
 * from the `alerts` table at scrape time): the Prometheus rule of every condition that only the
 * database can see. `max`: every scheduler replica reports the same table.
 */
function openInDatabase(id: AlertConditionId): string {
  return `max(matoolkit_alerts_open{condition="${id}"}) > 0`;
}

/** The evaluator logs one `alert raised` line per raise (JSON, field `condition`). */
function raisedInLogs(id: AlertConditionId): AzureLogAlert {
  return {
    query: [
      "ContainerAppConsoleLogs_CL",
      `| where Log_s contains '"msg":"alert raised"' and Log_s contains '"condition":"${id}"'`,
      "| project TimeGenerated, ContainerAppName_s, Log_s",
    ].join("\n"),
    frequencyMinutes: 5,
    windowMinutes: 5,
  };
}

export const alertDefinitions: readonly AlertDefinition[] = [
  {
    id: "source-failing",
    severity: "critical",
    summary: "A runbook's data source failed several scheduler ticks in a row",
    description:
      `The scheduler could not read the runbook's data source ${t.sourceFailingTicks} ticks in a row ` +
      "(runbooks.last_error): no new batch is created and no member is added or removed until it is fixed.",
    thresholds: { consecutiveTicks: t.sourceFailingTicks },
    inProcess: `runbooks.consecutive_failures >= ${t.sourceFailingTicks} on the active version`,
    prometheus: { expr: openInDatabase("source-failing"), for: "0m" },
    azure: raisedInLogs("source-failing"),
  },
  {
    id: "dead-letters",
    severity: "critical",
    summary: "Messages were dead-lettered",
    description:
      "A message exhausted its deliveries and was dead-lettered (bus_dead_letters in Dapr mode, the " +
      `pg-boss .dlq queues embedded) within the last ${t.deadLetterWindowSeconds / 3600} h: some work was not done.`,
    thresholds: { count: 0, windowSeconds: t.deadLetterWindowSeconds },
    inProcess: "dead letters per subscription, dead-lettered within the window, > 0",
    prometheus: { expr: openInDatabase("dead-letters"), for: "0m" },
    azure: raisedInLogs("dead-letters"),
  },
  {
    id: "steps-past-timeout",
    severity: "warning",
    summary: "Steps stay dispatched past their timeout",
    description:
      "Steps are still `dispatched` more than their timeout plus " +
      `${t.stepTimeoutGraceSeconds} s after dispatch: the orchestrator's reconcile (stuck executions) is not failing them.`,
    thresholds: { graceSeconds: t.stepTimeoutGraceSeconds },
    inProcess:
      "step_executions dispatched, dispatched_at + coalesce(timeout_sec, 3600 s) + grace < now, per batch",
    prometheus: { expr: openInDatabase("steps-past-timeout"), for: "0m" },
    azure: raisedInLogs("steps-past-timeout"),
  },
  {
    id: "throttled-share",
    severity: "warning",
    summary: "The tenant throttles a large share of a worker pool's work",
    description:
      `Over ${t.throttledWindowSeconds / 60} min, at least ${t.throttledShare * 100} % of a pool's step results ` +
      "(in process) or of its job starts (Prometheus: throttled calls per job started) were throttled by the tenant.",
    thresholds: {
      share: t.throttledShare,
      windowSeconds: t.throttledWindowSeconds,
      minResults: t.throttledMinResults,
    },
    inProcess:
      `step results completed within the window, per worker pool, >= ${t.throttledMinResults} of them, ` +
      "share with a throttled reason code (graph.throttled, worker.throttled) >= threshold",
    prometheus: {
      expr:
        `sum by (worker_id) (rate(matoolkit_worker_api_throttled_calls_total[${t.throttledWindowSeconds / 60}m]))` +
        ` / clamp_min(sum by (worker_id) (rate(matoolkit_worker_job_starts_total[${t.throttledWindowSeconds / 60}m])), 1e-9)` +
        ` > ${t.throttledShare}`,
      for: "5m",
    },
    azure: raisedInLogs("throttled-share"),
  },
  {
    id: "phase-not-dispatched",
    severity: "critical",
    summary: "A phase fell due but was not dispatched",
    description:
      `A phase of an active batch has been due for more than ${t.phaseDueGraceSeconds} s and is still pending: ` +
      "the scheduler's tick is not dispatching (stopped, failing, or its timer is lost).",
    thresholds: { graceSeconds: t.phaseDueGraceSeconds },
    inProcess: "phase_executions pending, due_at + grace < now, batch active",
    prometheus: { expr: openInDatabase("phase-not-dispatched"), for: "0m" },
    azure: raisedInLogs("phase-not-dispatched"),
  },
  {
    id: "no-live-worker",
    severity: "critical",
    summary: "A worker pool seen in the last hour has no live worker",
    description:
      "A worker pool (worker_id) that reported metrics in the last hour has had none for " +
      `${t.workerAbsentSeconds / 60} min: its jobs wait on the bus until a worker of that pool runs again.`,
    thresholds: { absentSeconds: t.workerAbsentSeconds },
    inProcess: null,
    whyNotInProcess:
      "Workers write nothing to the database (they have none in Dapr mode): their job claims live in the " +
      "idempotency store (the Dapr state store there) and no heartbeat exists, so the system cannot tell a dead " +
      "pool from an idle one. Prometheus can: the pool's scrape target disappears.",
    prometheus: {
      expr:
        "max_over_time(count by (worker_id) (matoolkit_worker_jobs_waiting_to_start)[1h:1m])" +
        " unless count by (worker_id) (matoolkit_worker_jobs_waiting_to_start)",
      for: `${t.workerAbsentSeconds / 60}m`,
    },
    azure: null,
    whyNotAzure:
      "On ACA the worker app keeps minReplicas 1 and Container Apps restarts a replica that dies; a pool " +
      "that is down for longer shows in the app's own health, not in a log line the system could write.",
  },
  {
    id: "batch-failed",
    severity: "warning",
    summary: "A batch failed",
    description:
      `A batch ended failed within the last ${t.batchFailedWindowSeconds / 3600} h (an init step failed, or every ` +
      "phase failed). Resolved when the batch is redriven or the window passes.",
    thresholds: { windowSeconds: t.batchFailedWindowSeconds },
    inProcess: "batches failed, their failed event within the window",
    prometheus: { expr: openInDatabase("batch-failed"), for: "0m" },
    azure: raisedInLogs("batch-failed"),
  },
];

export function alertDefinition(id: AlertConditionId): AlertDefinition {
  const found = alertDefinitions.find((definition) => definition.id === id);
  if (found === undefined) throw new Error(`No alert condition ${id}`);
  return found;
}
