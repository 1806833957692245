import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";
import { createAlertMetrics, type AlertMetrics } from "./alert-metrics.ts";
import { createPacingMetrics, type PacingMetrics } from "./pacing-metrics.ts";

/**
 * The process's Prometheus instruments, on a registry of their own (served as text at
 * `/metrics`). Labels are bounded sets (outcomes, reason codes, topics, message types, express
 * route patterns, status codes): never ids, URLs, UPNs or anything else from a member.
 */
export interface Metrics {
  readonly registry: Registry;
  /** Worker results the orchestrator recorded, by outcome and stable reason code. */
  readonly stepResults: Counter<"outcome" | "reason_code">;
  /** Queue lag: delivery time minus the time the message was queued (or fell due). */
  readonly messageAge: Histogram<"topic" | "subscription">;
  /** Timer lag: delivery time minus the due time of a delayed message (phase-due, retry, poll). */
  readonly timerLag: Histogram<"message_type">;
  /** Duration of one scheduler tick (data sources read, batches synced, due phases dispatched). */
  readonly schedulerTick: Histogram<"outcome">;
  /** Admin API latency by express route pattern (not the raw URL: ids stay out of labels). */
  readonly httpDuration: Histogram<"method" | "route" | "status">;
  /** The workers' job start rate and in-flight calls per API, read at scrape time (issue 30). */
  readonly workerPacing: PacingMetrics;
  /** The open alerts per condition, read from the database at scrape time (issue 31, the scheduler). */
  readonly alertsOpen: AlertMetrics;
  /** Prometheus text exposition of everything above plus Node's default metrics. */
  expose(): Promise<{ readonly contentType: string; readonly body: string }>;
}

export interface CreateMetricsOptions {
  /** Node's process metrics (CPU, memory, event loop lag, GC); default true. */
  readonly defaultMetrics?: boolean;
}

/** Seconds buckets from 5 ms to 10 minutes: queue and timer lag span both ends. */
const lagBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export function createMetrics(options: CreateMetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    stepResults: new Counter({
      name: "matoolkit_step_results_total",
      help: "Worker results recorded by the orchestrator, by outcome (succeeded, failed, incomplete) and reason code",
      labelNames: ["outcome", "reason_code"],
      registers,
    }),
    messageAge: new Histogram({
      name: "matoolkit_message_age_seconds",
      help: "Queue lag: seconds from publish (or due time) to delivery to a handler",
      labelNames: ["topic", "subscription"],
      buckets: lagBuckets,
      registers,
    }),
    timerLag: new Histogram({
      name: "matoolkit_timer_lag_seconds",
      help: "Due-time lag: seconds from a delayed message's due time to its delivery",
      labelNames: ["message_type"],
      buckets: lagBuckets,
      registers,
    }),
    schedulerTick: new Histogram({
      name: "matoolkit_scheduler_tick_seconds",
      help: "Duration of a scheduler tick, by outcome (ok, failed)",
      labelNames: ["outcome"],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
    httpDuration: new Histogram({
      name: "matoolkit_http_request_duration_seconds",
      help: "Admin API request latency by method, express route pattern and status code",
      labelNames: ["method", "route", "status"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    workerPacing: createPacingMetrics(registers),
    alertsOpen: createAlertMetrics(registers),
    async expose() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

let processWide: Metrics | undefined;

/**
 * The process-wide instruments, created on first use: what a service uses when its options name
 * none. One registry per process is what Prometheus scrapes (all-in-one runs four services in
 * one process: they share it, and one `/metrics` shows them all). Tests that need exact counts
 * pass their own `createMetrics()` instead.
 */
export function processMetrics(): Metrics {
  processWide ??= createMetrics();
  return processWide;
}
