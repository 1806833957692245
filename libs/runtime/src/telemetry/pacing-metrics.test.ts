import { describe, expect, it } from "vitest";
import { parsePrometheusText, sampleValue } from "../../test/telemetry/prometheus-text.ts";
import { createMetrics } from "./metrics.ts";
import type { PacingMetricsReading } from "./pacing-metrics.ts";

/** The workers' pacing on /metrics: read from each worker at scrape time, labelled by pool and API. */
describe("worker pacing metrics", () => {
  it("shows each tracked worker's rate, waiting deliveries, and per-API calls and limits as read at the scrape", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    let reading: PacingMetricsReading = {
      jobStarts: 120,
      waitingToStart: 3,
      startRate: { current: 10, cap: 20 },
      apis: [
        { api: "graph", inFlight: 5, limit: { current: 4, cap: 8 }, throttledCalls: 7 },
        { api: "exchange", inFlight: 1, limit: null, throttledCalls: 0 },
      ],
    };
    const untrack = metrics.workerPacing.track("worker-01", () => reading);
    metrics.workerPacing.track("worker-02", () => ({
      jobStarts: 4,
      waitingToStart: 0,
      startRate: null,
      apis: [],
    }));

    const scrape = async () => parsePrometheusText((await metrics.expose()).body);
    let samples = await scrape();
    const w1 = { worker_id: "worker-01" };
    expect(sampleValue(samples, "matoolkit_worker_job_starts_total", w1)).toBe(120);
    expect(sampleValue(samples, "matoolkit_worker_jobs_waiting_to_start", w1)).toBe(3);
    expect(sampleValue(samples, "matoolkit_worker_job_start_rate", w1)).toBe(10);
    expect(sampleValue(samples, "matoolkit_worker_job_start_rate_cap", w1)).toBe(20);
    const graph = { ...w1, api: "graph" };
    expect(sampleValue(samples, "matoolkit_worker_api_calls_in_flight", graph)).toBe(5);
    expect(sampleValue(samples, "matoolkit_worker_api_in_flight_limit", graph)).toBe(4);
    expect(sampleValue(samples, "matoolkit_worker_api_in_flight_limit_cap", graph)).toBe(8);
    expect(sampleValue(samples, "matoolkit_worker_api_throttled_calls_total", graph)).toBe(7);
    const exchange = { ...w1, api: "exchange" };
    expect(sampleValue(samples, "matoolkit_worker_api_calls_in_flight", exchange)).toBe(1);
    // Not capped, not paced: no limit sample rather than a made-up number.
    expect(sampleValue(samples, "matoolkit_worker_api_in_flight_limit", exchange)).toBeUndefined();
    const w2 = { worker_id: "worker-02" };
    expect(sampleValue(samples, "matoolkit_worker_job_starts_total", w2)).toBe(4);
    expect(sampleValue(samples, "matoolkit_worker_job_start_rate", w2)).toBeUndefined();

    // The next scrape reads again: the rate climbed, more jobs started.
    reading = { ...reading, jobStarts: 150, startRate: { current: 12.5, cap: 20 } };
    samples = await scrape();
    expect(sampleValue(samples, "matoolkit_worker_job_starts_total", w1)).toBe(150);
    expect(sampleValue(samples, "matoolkit_worker_job_start_rate", w1)).toBe(12.5);

    untrack();
    samples = await scrape();
    expect(sampleValue(samples, "matoolkit_worker_job_starts_total", w1)).toBeUndefined();
    expect(sampleValue(samples, "matoolkit_worker_job_starts_total", w2)).toBe(4);
  });
});
