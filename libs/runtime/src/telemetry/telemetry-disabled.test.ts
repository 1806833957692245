import { randomUUID } from "node:crypto";
import { enqueueOutbox } from "@matoolkit/db";
import { topics } from "@matoolkit/domain";
import type { TestDatabase } from "@matoolkit/testing";
import { trace } from "@opentelemetry/api";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import type { Delivery, MessageBus } from "../ports/index.ts";
import { startEmbeddedTelemetry, type EmbeddedTelemetry } from "../../test/telemetry/embedded-telemetry.ts";
import { parsePrometheusText, sampleValue } from "../../test/telemetry/prometheus-text.ts";
import type { Telemetry } from "./start-telemetry.ts";

/**
 * OTEL_SDK_DISABLED=true (platform-config.ts → `sdkDisabled`): a process that collects no traces
 * pays nothing per message for them, and still answers its health and metrics paths.
 */
const logger = createLogger({ level: "silent", name: "telemetry-disabled-test" });
let fixture: EmbeddedTelemetry;
let database: TestDatabase;
let telemetry: Telemetry;
let bus: MessageBus;
const deliveries: Array<{ delivery: Delivery; traced: boolean }> = [];

beforeAll(async () => {
  fixture = await startEmbeddedTelemetry(
    { sdkDisabled: true, metricsPort: 0, metricsHost: "127.0.0.1", otlpEndpoint: "http://127.0.0.1:9" },
    logger,
  );
  ({ database, telemetry, bus } = fixture);
  telemetry.readyWhen(Promise.resolve());
  await bus.subscribe({ topic: topics.workerResults, name: "orchestrator" }, async (delivery) => {
    deliveries.push({ delivery, traced: trace.getActiveSpan()?.isRecording() ?? false });
  });
});

afterAll(async () => {
  await fixture?.stop();
});

describe("telemetry disabled (OTEL_SDK_DISABLED)", () => {
  it("delivers a message as published: no trace context, no publish time, no span, no lag sample", async () => {
    const id = `msg-${randomUUID()}`;
    await bus.publish({ id, topic: topics.workerResults, properties: { MessageType: "result" }, body: {} });
    await expect.poll(() => deliveries.find((entry) => entry.delivery.id === id)).toBeDefined();
    const { delivery, traced } = deliveries.find((entry) => entry.delivery.id === id)!;
    expect(delivery.properties).toEqual({ MessageType: "result" });
    expect(traced).toBe(false);

    const metrics = await fetch(`${telemetry.metricsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    const samples = parsePrometheusText(await metrics.text());
    const queued = { topic: topics.workerResults, subscription: "orchestrator" };
    expect(sampleValue(samples, "matoolkit_message_age_seconds_count", queued)).toBeUndefined();
    expect((await fetch(`${telemetry.metricsUrl}/readyz`)).status).toBe(200);
  });

  it("adds nothing to an outbox row's properties", async () => {
    const id = `msg-${randomUUID()}`;
    await enqueueOutbox(database.db, [
      { messageId: id, topic: topics.notifications, properties: { A: "b" }, body: {} },
    ]);
    const row = await sql<{ properties: Record<string, string> }>`
      SELECT properties FROM outbox WHERE message_id = ${id}`.execute(database.db);
    expect(row.rows[0]!.properties).toEqual({ A: "b" });
  });
});
