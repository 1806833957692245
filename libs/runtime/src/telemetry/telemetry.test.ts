import { randomUUID } from "node:crypto";
import { enqueueOutbox } from "@matoolkit/db";
import { topics } from "@matoolkit/domain";
import type { TestDatabase } from "@matoolkit/testing";
import { context, trace } from "@opentelemetry/api";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import { startOutboxRelay, type OutboxRelay } from "../outbox/outbox-relay.ts";
import type { Delivery, MessageBus } from "../ports/index.ts";
import { startInMemoryTracing, type InMemoryTracing } from "../../test/telemetry/in-memory-tracing.ts";
import { startEmbeddedTelemetry, type EmbeddedTelemetry } from "../../test/telemetry/embedded-telemetry.ts";
import { parsePrometheusText, sampleValue } from "../../test/telemetry/prometheus-text.ts";
import type { Telemetry } from "./start-telemetry.ts";
import { telemetryProperties } from "./trace-properties.ts";
import { matoolkitTracer, otlpTracesUrl } from "./tracing.ts";

/**
 * What startTelemetry sets up in a process, on the embedded runtime and a real database: outbox
 * rows carry the trace of the transaction that wrote them, the relay's publish continues it, a
 * delayed message's timer lag is measured, and the metrics server answers its three paths.
 */
const logger = createLogger({ level: "silent", name: "telemetry-test" });
let tracing: InMemoryTracing;
let fixture: EmbeddedTelemetry;
let database: TestDatabase;
let telemetry: Telemetry;
let bus: MessageBus;
let relay: OutboxRelay;
let metricsUrl: string;
let markReady: () => void;
const deliveries: Array<{ delivery: Delivery; spanId: string | undefined }> = [];

beforeAll(async () => {
  tracing = startInMemoryTracing("telemetry-test");
  fixture = await startEmbeddedTelemetry({ metricsPort: 0, metricsHost: "127.0.0.1" }, logger);
  ({ database, telemetry, bus } = fixture);
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  telemetry.readyWhen(ready);
  await bus.subscribe({ topic: topics.orchestratorEvents, name: "orchestrator" }, async (delivery) => {
    deliveries.push({ delivery, spanId: trace.getActiveSpan()?.spanContext().spanId });
  });
  await bus.subscribe({ topic: topics.workerResults, name: "orchestrator" }, async (delivery) => {
    deliveries.push({ delivery, spanId: trace.getActiveSpan()?.spanContext().spanId });
  });
  relay = await startOutboxRelay({ db: database.db, bus, logger, pollIntervalMs: 100 });
  metricsUrl = telemetry.metricsUrl!;
});

afterAll(async () => {
  await relay?.stop();
  await fixture?.stop();
  await tracing?.shutdown();
});

const delivered = (id: string) =>
  expect.poll(() => deliveries.find((entry) => entry.delivery.id === id)).toBeDefined();

describe("trace context through the outbox", () => {
  it("stores the writer's traceparent with the row; the delivery's span descends from the writer's span", async () => {
    const id = `msg-${randomUUID()}`;
    const request = matoolkitTracer().startSpan("admin request");
    await context.with(trace.setSpan(context.active(), request), () =>
      database.db.transaction().execute((trx) =>
        enqueueOutbox(trx, [
          {
            messageId: id,
            topic: topics.orchestratorEvents,
            properties: { MessageType: "batch-init" },
            body: {},
          },
        ]),
      ),
    );
    request.end();
    await delivered(id);

    const entry = deliveries.find((candidate) => candidate.delivery.id === id)!;
    const process = tracing.span(entry.spanId!);
    expect(tracing.ancestry(process).map((span) => span.name)).toEqual([
      `${topics.orchestratorEvents} process`,
      `${topics.orchestratorEvents} publish`,
      "admin request",
    ]);
    // On the wire: the publish span as parent, the enqueue time, and the routing property kept.
    const publish = tracing.ancestry(process)[1]!;
    expect(entry.delivery.properties).toMatchObject({
      MessageType: "batch-init",
      [telemetryProperties.traceparent]: `00-${request.spanContext().traceId}-${publish.spanContext().spanId}-01`,
    });
    expect(Number.isNaN(Date.parse(entry.delivery.properties[telemetryProperties.publishedAt]!))).toBe(false);
  });

  it("leaves rows written outside any span without a traceparent (no made-up parent)", async () => {
    const id = `msg-${randomUUID()}`;
    await enqueueOutbox(database.db, [
      {
        messageId: id,
        topic: topics.orchestratorEvents,
        properties: { MessageType: "batch-init" },
        body: {},
      },
    ]);
    await delivered(id);
    const entry = deliveries.find((candidate) => candidate.delivery.id === id)!;
    // The relay's publish span starts a trace of its own: the process span's only ancestor.
    expect(tracing.ancestry(tracing.span(entry.spanId!)).map((span) => span.name)).toEqual([
      `${topics.orchestratorEvents} process`,
      `${topics.orchestratorEvents} publish`,
    ]);
  });
});

describe("trace context of a publish inside the writer's transaction", () => {
  it("the delivery's span descends from the span active where the transaction published", async () => {
    const id = `msg-${randomUUID()}`;
    const handler = matoolkitTracer().startSpan("result handler");
    await context.with(trace.setSpan(context.active(), handler), () =>
      database.db
        .transaction()
        .execute((trx) =>
          bus.publishInTransaction!(trx, [
            { id, topic: topics.orchestratorEvents, properties: { MessageType: "batch-init" }, body: {} },
          ]),
        ),
    );
    handler.end();
    await delivered(id);
    const entry = deliveries.find((candidate) => candidate.delivery.id === id)!;
    expect(tracing.ancestry(tracing.span(entry.spanId!)).map((span) => span.name)).toEqual([
      `${topics.orchestratorEvents} process`,
      `${topics.orchestratorEvents} publish`,
      "result handler",
    ]);
  });
});

describe("trace context of a settled delivery", () => {
  it("the result published by settleDelivery descends from the handler that settled the job", async () => {
    const jobId = `job-${randomUUID()}`;
    const resultId = `result-${randomUUID()}`;
    const subscription = `settle-${randomUUID().slice(0, 8)}`;
    await bus.subscribe(
      { topic: topics.workerJobs, name: subscription, filter: { WorkerId: subscription } },
      async (delivery) => {
        await bus.settleDelivery!({
          delivery,
          outcome: { key: `worker-job:${jobId}`, value: { ok: true }, ttlSeconds: 60 },
          // Not worker-results: the lag test below counts that subscription's deliveries.
          messages: [{ id: resultId, topic: topics.orchestratorEvents, properties: {}, body: {} }],
        });
      },
    );
    await bus.publish({
      id: jobId,
      topic: topics.workerJobs,
      properties: { WorkerId: subscription },
      body: {},
    });
    await delivered(resultId);
    const entry = deliveries.find((candidate) => candidate.delivery.id === resultId)!;
    expect(tracing.ancestry(tracing.span(entry.spanId!)).map((span) => span.name)).toEqual([
      `${topics.orchestratorEvents} process`,
      `${topics.orchestratorEvents} publish`,
      `${topics.workerJobs} process`,
      `${topics.workerJobs} publish`,
    ]);
  });
});

describe("trace context of messages taken in a transaction (consumeInTransaction)", () => {
  it("gives each message taken a process span under its publish, active after the take, failed with a failed batch; the fallback's delivery is traced too", async () => {
    const subscription = `trx-${randomUUID().slice(0, 8)}`;
    const [good, bad] = [`good-${randomUUID()}`, `bad-${randomUUID()}`];
    const fallbackSpans = new Map<string, string | undefined>();
    const activeAfterTake = new Map<string, string | undefined>();
    await bus.consumeInTransaction!(
      { topic: topics.workerJobs, name: subscription, filter: { WorkerId: subscription }, batchSize: 10 },
      async (take) => {
        await database.db.transaction().execute(async (trx) => {
          const taken = await take(trx);
          for (const delivery of taken)
            activeAfterTake.set(delivery.id, trace.getActiveSpan()?.spanContext().spanId);
          if (taken.some((delivery) => delivery.id === bad)) throw new Error("the batch fails");
        });
      },
      async (delivery) => void fallbackSpans.set(delivery.id, trace.getActiveSpan()?.spanContext().spanId),
    );
    const publisher = matoolkitTracer().startSpan("publisher");
    await context.with(trace.setSpan(context.active(), publisher), () =>
      bus.publish({ id: good, topic: topics.workerJobs, properties: { WorkerId: subscription }, body: {} }),
    );
    publisher.end();
    const processSpans = (id: string) =>
      tracing
        .spans()
        .filter(
          (span) =>
            span.name === `${topics.workerJobs} process` && span.attributes["messaging.message.id"] === id,
        );
    await expect.poll(() => processSpans(good).length).toBe(1);
    expect(tracing.ancestry(processSpans(good)[0]!).map((span) => span.name)).toEqual([
      `${topics.workerJobs} process`,
      `${topics.workerJobs} publish`,
      "publisher",
    ]);
    expect(processSpans(good)[0]!.status.code).not.toBe(2);
    // What the batch does after taking (the next jobs it publishes) runs as the message's span.
    expect(activeAfterTake.get(good)).toBe(processSpans(good)[0]!.spanContext().spanId);

    await bus.publish({
      id: bad,
      topic: topics.workerJobs,
      properties: { WorkerId: subscription },
      body: {},
    });
    await expect.poll(() => fallbackSpans.has(bad)).toBe(true);
    await expect.poll(() => processSpans(bad).length).toBe(2);
    const [inBatch, alone] = [
      processSpans(bad).find((span) => span.spanContext().spanId !== fallbackSpans.get(bad)),
      processSpans(bad).find((span) => span.spanContext().spanId === fallbackSpans.get(bad)),
    ];
    // ERROR (2) for the span of the batch that failed; the delivery alone went through.
    expect(inBatch!.status.code).toBe(2);
    expect(alone!.status.code).not.toBe(2);
  });
});

describe("lag metrics", () => {
  it("records a delayed message's timer lag from its due time, and its queue lag", async () => {
    const id = `msg-${randomUUID()}`;
    // Due a minute ago (a timer that fired late): delivered at once, at least 60 s behind.
    await bus.publish({
      id,
      topic: topics.workerResults,
      properties: { MessageType: "retry-check" },
      body: {},
      deliverAt: new Date(Date.now() - 60_000),
    });
    await delivered(id);
    const samples = parsePrometheusText(await (await fetch(`${metricsUrl}/metrics`)).text());
    const value = (name: string, labels: Record<string, string>) =>
      sampleValue(samples, name, labels) ?? Number.NaN;
    const lagged = { message_type: "retry-check" };
    const queued = { topic: topics.workerResults, subscription: "orchestrator" };
    expect(value("matoolkit_timer_lag_seconds_count", lagged)).toBe(1);
    expect(value("matoolkit_message_age_seconds_count", queued)).toBe(1);
    // Both at the same delivery: timer lag runs from the due time, queue lag from the later
    // publish, so they differ by at least the minute between the two.
    expect(
      value("matoolkit_timer_lag_seconds_sum", lagged) - value("matoolkit_message_age_seconds_sum", queued),
    ).toBeGreaterThan(59.999);
  });
});

describe("metrics server (MATOOLKIT_METRICS_PORT)", () => {
  it("answers /healthz at once, /readyz once the platform is ready, /metrics as Prometheus text", async () => {
    expect((await fetch(`${metricsUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${metricsUrl}/readyz`)).status).toBe(503);
    markReady();
    await expect.poll(async () => (await fetch(`${metricsUrl}/readyz`)).status).toBe(200);
    const response = await fetch(`${metricsUrl}/metrics`);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/u);
    expect(
      sampleValue(parsePrometheusText(await response.text()), "nodejs_eventloop_lag_seconds"),
    ).toBeGreaterThanOrEqual(0);
    expect((await fetch(`${metricsUrl}/other`)).status).toBe(404);
  });
});

describe("otlpTracesUrl", () => {
  it("appends /v1/traces to the base endpoint; a traces endpoint is used as is", () => {
    expect(otlpTracesUrl({ otlpEndpoint: "http://collector:4318/" })).toBe("http://collector:4318/v1/traces");
    expect(
      otlpTracesUrl({
        otlpEndpoint: "http://collector:4318",
        otlpTracesEndpoint: "https://x.example/traces",
      }),
    ).toBe("https://x.example/traces");
    expect(otlpTracesUrl({})).toBeUndefined();
  });
});

// The row itself, as libs/db stored it: the relay is stopped first, so the row stays to be read.
describe("outbox row", () => {
  it("stores traceparent and published-at in its properties column", async () => {
    const request = matoolkitTracer().startSpan("writer");
    const id = `msg-${randomUUID()}`;
    await relay.stop();
    await context.with(trace.setSpan(context.active(), request), () =>
      enqueueOutbox(database.db, [
        { messageId: id, topic: topics.notifications, properties: { A: "b" }, body: {} },
      ]),
    );
    request.end();
    const row = await sql<{ properties: Record<string, string> }>`
      SELECT properties FROM outbox WHERE message_id = ${id}`.execute(database.db);
    expect(row.rows[0]!.properties).toMatchObject({
      A: "b",
      traceparent: `00-${request.spanContext().traceId}-${request.spanContext().spanId}-01`,
    });
    expect(Object.keys(row.rows[0]!.properties).sort()).toEqual(["A", "published-at", "traceparent"]);
  });
});
