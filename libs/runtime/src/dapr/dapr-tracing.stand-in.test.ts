import { freePort } from "@matoolkit/dapr-harness/free-port";
import { randomUUID } from "node:crypto";
import { topics } from "@matoolkit/domain";
import { createStandInBroker, startStandInSidecar, type StandInBroker } from "@matoolkit/dapr-stand-in";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { context, trace, type SpanContext } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../logger.ts";
import type { Delivery } from "../ports/index.ts";
import { instrumentMessageBus } from "../telemetry/instrumented-bus.ts";
import { createMetrics } from "../telemetry/metrics.ts";
import { parsePrometheusText, sampleValue } from "../../test/telemetry/prometheus-text.ts";
import { matoolkitTracer, startTracing, type Tracing } from "../telemetry/tracing.ts";
import { createDaprRuntime, type DaprRuntime } from "./create-dapr-runtime.ts";

/**
 * Trace context across the Dapr bus, against the stand-in sidecar (which builds CloudEvents as
 * daprd does, `cloudevent.traceparent` overrides included): the message's traceparent becomes the
 * CloudEvent's, and the handler's span continues it — for a single publish and a bulk publish.
 */
let database: TestDatabase;
let broker: StandInBroker;
let tracing: Tracing;
let runtime: DaprRuntime;
let stopSidecar: () => Promise<void>;
const exporter = new InMemorySpanExporter();
const logger = createLogger({ level: "silent", name: "dapr-tracing-test" });
const metrics = createMetrics({ defaultMetrics: false });
const deliveries: Array<{ delivery: Delivery; span: SpanContext | undefined }> = [];
let bus: ReturnType<typeof instrumentMessageBus<NonNullable<DaprRuntime["bus"]>>>;

beforeAll(async () => {
  tracing = startTracing({ serviceName: "dapr-tracing-test", exporter, logger });
  database = await createTestDatabase();
  broker = createStandInBroker({ redeliveryDelayMs: 20 });
  const appPort = await freePort();
  const sidecar = await startStandInSidecar({
    broker,
    appId: "tracing-app",
    appUrl: `http://127.0.0.1:${appPort}`,
    log: () => undefined,
  });
  stopSidecar = () => sidecar.stop();
  runtime = await createDaprRuntime({
    sidecar: { httpEndpoint: sidecar.url },
    app: { host: "127.0.0.1", port: appPort },
    pubsubName: "matoolkit-pubsub",
    stateStoreName: "matoolkit-state",
    jobsApiVersion: "v1.0-alpha1",
    db: database.db,
    logger,
    dedupeWindowSeconds: 600,
    ports: { bus: true, timers: "dapr-jobs", idempotency: false },
  });
  bus = instrumentMessageBus(runtime.bus!, { system: "dapr", metrics });
  await bus.subscribe({ topic: topics.orchestratorEvents, name: "orchestrator" }, async (delivery) => {
    deliveries.push({ delivery, span: trace.getActiveSpan()?.spanContext() });
  });
  await runtime.start();
  await sidecar.ready();
});

afterAll(async () => {
  await runtime?.stop();
  await stopSidecar?.();
  broker?.close();
  await database?.drop();
  await tracing?.shutdown();
});

const spansNamed = (name: string): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((span) => span.name === name);
const traceparentOf = (span: ReadableSpan) =>
  `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;

describe("trace context on the Dapr bus", () => {
  it("carries the publish span as the CloudEvent's traceparent; the handler's span continues it", async () => {
    const single = randomUUID();
    const bulk = [randomUUID(), randomUUID()];
    const request = matoolkitTracer().startSpan("test request");
    await context.with(trace.setSpan(context.active(), request), async () => {
      await bus.publish({
        id: single,
        topic: topics.orchestratorEvents,
        properties: { MessageType: "batch-init" },
        body: { BatchId: 1 },
      });
      await bus.publishMany(
        bulk.map((id) => ({
          id,
          topic: topics.orchestratorEvents,
          properties: { MessageType: "phase-due" },
          body: { BatchId: 2 },
        })),
      );
    });
    request.end();
    const traceId = request.spanContext().traceId;
    const ids = [single, ...bulk];

    await vi.waitFor(
      () => expect(deliveries.map((entry) => entry.delivery.id).sort()).toEqual([...ids].sort()),
      {
        timeout: 10_000,
        interval: 25,
      },
    );
    await vi.waitFor(() => expect(spansNamed(`${topics.orchestratorEvents} process`)).toHaveLength(3));

    const publishes = spansNamed(`${topics.orchestratorEvents} publish`);
    const processes = spansNamed(`${topics.orchestratorEvents} process`);
    const cloudEvents = broker.messages(topics.orchestratorEvents).map((message) => message.cloudEvent);
    for (const id of ids) {
      const publish = publishes.find((span) => span.attributes["messaging.message.id"] === id)!;
      const process = processes.find((span) => span.attributes["messaging.message.id"] === id)!;
      const event = cloudEvents.find((candidate) => candidate.id === id)!;
      expect({
        publishParent: publish.parentSpanContext?.spanId,
        publishTrace: publish.spanContext().traceId,
        cloudEventTraceparent: event.traceparent,
        processTrace: process.spanContext().traceId,
        processParent: process.parentSpanContext?.spanId,
        handlerSawItsSpan: deliveries.find((entry) => entry.delivery.id === id)?.span?.spanId,
      }).toEqual({
        publishParent: request.spanContext().spanId,
        publishTrace: traceId,
        cloudEventTraceparent: traceparentOf(publish),
        processTrace: traceId,
        processParent: publish.spanContext().spanId,
        handlerSawItsSpan: process.spanContext().spanId,
      });
      expect(process.attributes).toMatchObject({
        "messaging.system": "dapr",
        "messaging.destination.name": topics.orchestratorEvents,
        "messaging.consumer.group.name": "orchestrator",
        "messaging.operation.type": "process",
      });
    }
    // The handler gets the routing properties only, as before: trace context travels beside them.
    expect(deliveries.map((entry) => Object.keys(entry.delivery.properties))).toEqual(
      ids.map(() => ["MessageType"]),
    );

    // Queue lag from the CloudEvent's time, once per delivery.
    const samples = parsePrometheusText(await metrics.registry.metrics());
    expect(
      sampleValue(samples, "matoolkit_message_age_seconds_count", {
        topic: topics.orchestratorEvents,
        subscription: "orchestrator",
      }),
    ).toBe(3);
  });
});
