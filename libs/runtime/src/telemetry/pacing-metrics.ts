import { Counter, Gauge, type Registry } from "prom-client";

/**
 * A worker's pacing as a scrape sees it (issue 30; services/worker/src/pacing/worker-pacing.ts
 * produces it). Kept structural here: this library does not depend on the worker.
 */
export interface PacingMetricsReading {
  readonly jobStarts: number;
  readonly waitingToStart: number;
  readonly startRate: { readonly current: number; readonly cap: number } | null;
  readonly apis: readonly {
    readonly api: string;
    readonly inFlight: number;
    readonly limit: { readonly current: number; readonly cap: number } | null;
    readonly throttledCalls: number;
  }[];
}

export interface PacingMetrics {
  /**
   * Reads the worker's pacing at every scrape, labelled with its pool (`worker_id`: an operator's
   * configuration, a bounded set); returns the function that stops it (the worker stopped).
   */
  track(workerId: string, read: () => PacingMetricsReading): () => void;
}

/**
 * Read at scrape time rather than set on every change: the adaptive rate climbs with the clock,
 * not with events, so a gauge set on events would show a stale value between them.
 */
export function createPacingMetrics(registers: Registry[]): PacingMetrics {
  const sources = new Map<string, () => PacingMetricsReading>();
  const readings = () => [...sources].map(([workerId, read]) => ({ workerId, reading: read() }));
  const perWorker = <T extends Gauge<"worker_id"> | Counter<"worker_id">>(
    metric: T,
    value: (reading: PacingMetricsReading) => number | undefined,
  ) => {
    metric.reset();
    for (const { workerId, reading } of readings()) {
      const v = value(reading);
      if (v === undefined) continue;
      if (metric instanceof Gauge) metric.set({ worker_id: workerId }, v);
      else metric.inc({ worker_id: workerId }, v);
    }
  };
  const perApi = <T extends Gauge<"worker_id" | "api"> | Counter<"worker_id" | "api">>(
    metric: T,
    value: (api: PacingMetricsReading["apis"][number]) => number | undefined,
  ) => {
    metric.reset();
    for (const { workerId, reading } of readings()) {
      for (const api of reading.apis) {
        const v = value(api);
        if (v === undefined) continue;
        const labels = { worker_id: workerId, api: api.api };
        if (metric instanceof Gauge) metric.set(labels, v);
        else metric.inc(labels, v);
      }
    }
  };

  new Counter({
    name: "matoolkit_worker_job_starts_total",
    help: "Jobs the worker let start (after waiting for their turn when paced), by worker pool",
    labelNames: ["worker_id"],
    registers,
    collect() {
      perWorker(this, (r) => r.jobStarts);
    },
  });
  new Gauge({
    name: "matoolkit_worker_jobs_waiting_to_start",
    help: "Deliveries waiting for their turn to start (job start pacing), by worker pool",
    labelNames: ["worker_id"],
    registers,
    collect() {
      perWorker(this, (r) => r.waitingToStart);
    },
  });
  new Gauge({
    name: "matoolkit_worker_job_start_rate",
    help: "Job starts per second the worker allows now: the cap, lowered while the tenant throttles",
    labelNames: ["worker_id"],
    registers,
    collect() {
      perWorker(this, (r) => r.startRate?.current);
    },
  });
  new Gauge({
    name: "matoolkit_worker_job_start_rate_cap",
    help: "Job starts per second configured (MATOOLKIT_RATE_LIMIT)",
    labelNames: ["worker_id"],
    registers,
    collect() {
      perWorker(this, (r) => r.startRate?.cap);
    },
  });
  new Gauge({
    name: "matoolkit_worker_api_calls_in_flight",
    help: "Calls to the tenant's APIs under way, by worker pool and API (graph, exchange)",
    labelNames: ["worker_id", "api"],
    registers,
    collect() {
      perApi(this, (a) => a.inFlight);
    },
  });
  new Gauge({
    name: "matoolkit_worker_api_in_flight_limit",
    help: "Calls at once the worker allows an API now: the cap, lowered while that API throttles",
    labelNames: ["worker_id", "api"],
    registers,
    collect() {
      perApi(this, (a) => a.limit?.current);
    },
  });
  new Gauge({
    name: "matoolkit_worker_api_in_flight_limit_cap",
    help: "Calls at once configured per API (MATOOLKIT_GRAPH_MAX_IN_FLIGHT, MATOOLKIT_EXCHANGE_MAX_IN_FLIGHT)",
    labelNames: ["worker_id", "api"],
    registers,
    collect() {
      perApi(this, (a) => a.limit?.cap);
    },
  });
  new Counter({
    name: "matoolkit_worker_api_throttled_calls_total",
    help: "Calls the tenant's APIs answered throttled (429, or 503 with Retry-After), by worker pool and API",
    labelNames: ["worker_id", "api"],
    registers,
    collect() {
      perApi(this, (a) => a.throttledCalls);
    },
  });

  return {
    track(workerId, read) {
      sources.set(workerId, read);
      return () => {
        if (sources.get(workerId) === read) sources.delete(workerId);
      };
    },
  };
}
