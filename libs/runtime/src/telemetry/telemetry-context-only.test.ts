import { randomUUID } from "node:crypto";
import { topics } from "@matoolkit/domain";
import { trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import type { Delivery, MessageBus } from "../ports/index.ts";
import { startEmbeddedTelemetry, type EmbeddedTelemetry } from "../../test/telemetry/embedded-telemetry.ts";
import { parsePrometheusText, sampleValue } from "../../test/telemetry/prometheus-text.ts";
import type { Telemetry } from "./start-telemetry.ts";
import { telemetryProperties } from "./trace-properties.ts";

/**
 * Telemetry on without an OTLP endpoint (the default): nothing would export a span, so none is
 * recorded, but the trace context a message brings travels on in what its handler publishes, and
 * the queue lag is still measured. On the embedded runtime and a real database.
 */
const logger = createLogger({ level: "silent", name: "telemetry-context-only-test" });
let fixture: EmbeddedTelemetry;
let telemetry: Telemetry;
let bus: MessageBus;
const results: Array<{ delivery: Delivery; recording: boolean }> = [];

beforeAll(async () => {
  fixture = await startEmbeddedTelemetry({ metricsPort: 0, metricsHost: "127.0.0.1" }, logger);
  ({ telemetry, bus } = fixture);
  telemetry.readyWhen(Promise.resolve());
  // A job's handler publishes its result, as the worker does.
  await bus.subscribe({ topic: topics.workerJobs, name: "worker" }, async (delivery) => {
    await bus.publish({
      id: `result-of-${delivery.id}`,
      topic: topics.workerResults,
      properties: { MessageType: "result" },
      body: {},
    });
  });
  await bus.subscribe({ topic: topics.workerResults, name: "orchestrator" }, async (delivery) => {
    results.push({ delivery, recording: trace.getActiveSpan()?.isRecording() ?? false });
  });
});

afterAll(async () => {
  await fixture?.stop();
});

async function resultOf(jobId: string): Promise<{ delivery: Delivery; recording: boolean }> {
  await expect.poll(() => results.find((entry) => entry.delivery.id === `result-of-${jobId}`)).toBeDefined();
  return results.find((entry) => entry.delivery.id === `result-of-${jobId}`)!;
}

describe("telemetry on, no OTLP endpoint: trace context only", () => {
  it("carries the trace a message brought into what its handler publishes, recording no span", async () => {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const jobId = `job-${randomUUID()}`;
    await bus.publish({
      id: jobId,
      topic: topics.workerJobs,
      properties: { MessageType: "job", traceparent, tracestate: "vendor=opaque" },
      body: {},
    });
    const result = await resultOf(jobId);
    expect(result.recording).toBe(false);
    // The same trace, parent and state: no span was made in between to be the parent.
    expect(result.delivery.properties[telemetryProperties.traceparent]).toBe(traceparent);
    expect(result.delivery.properties[telemetryProperties.tracestate]).toBe("vendor=opaque");
    expect(Date.parse(result.delivery.properties[telemetryProperties.publishedAt] ?? "")).not.toBeNaN();
  });

  it("starts no trace where none came in, and still measures the queue lag", async () => {
    const jobId = `job-${randomUUID()}`;
    await bus.publish({ id: jobId, topic: topics.workerJobs, properties: { MessageType: "job" }, body: {} });
    const result = await resultOf(jobId);
    expect(result.delivery.properties[telemetryProperties.traceparent]).toBeUndefined();
    expect(result.delivery.properties[telemetryProperties.publishedAt]).toBeDefined();
    const metrics = parsePrometheusText(await (await fetch(`${telemetry.metricsUrl}/metrics`)).text());
    const lagSamples = sampleValue(metrics, "matoolkit_message_age_seconds_count", {
      topic: topics.workerResults,
      subscription: "orchestrator",
    });
    expect(lagSamples).toBeGreaterThanOrEqual(1);
  });
});
