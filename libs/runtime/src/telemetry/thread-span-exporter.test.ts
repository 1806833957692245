/**
 * The span exporter whose OTLP encoding and sending run on a worker thread: what reaches a real
 * OTLP/HTTP receiver is what the exporter running in the process sent (byte for byte), and the
 * thread's failures cost the spans of the moment, never the caller.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace, type Context } from "@opentelemetry/api";
import { ExportResultCode, TraceState, type ExportResult } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { createOtlpExporter, createSpanRebuilder } from "./span-export-thread.ts";
import { ThreadSpanExporter, toSpanRecord } from "./thread-span-exporter.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Received {
  readonly path: string;
  readonly contentType: string;
  readonly body: Buffer;
}

/** An OTLP/HTTP receiver on loopback answering `status` (200: accepted) to every export. */
async function startReceiver(status = 200): Promise<{ url: string; requests: Received[] }> {
  const requests: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests.push({
        path: request.url ?? "",
        contentType: request.headers["content-type"] ?? "",
        body: Buffer.concat(chunks),
      });
      response.writeHead(status, { "content-type": request.headers["content-type"] ?? "application/json" });
      response.end(status === 200 ? undefined : "refused");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, requests };
}

/** Spans of every shape the encoders handle: remote parent and trace state, events, links, errors. */
function makeSpans(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "matoolkit-thread-test", "service.version": "1.2.3" }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer("matoolkit", "0.1.0");
  const remoteParent: Context = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: new TraceState("vendor=opaque,other=1"),
  });
  const consumer = tracer.startSpan(
    "worker-jobs process",
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        "messaging.system": "pg-boss",
        "messaging.message.id": "job-1",
        "matoolkit.message.delivery_count": 2,
        "matoolkit.flag": true,
        "matoolkit.ratio": 0.25,
        "matoolkit.names": ["a", "b"],
        "matoolkit.ü": "ünïcode ✓",
      },
      links: [
        {
          context: {
            traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
            spanId: "00f067aa0ba902b7",
            traceFlags: TraceFlags.SAMPLED,
            traceState: new TraceState("linked=yes"),
          },
          attributes: { "link.reason": "batch" },
        },
      ],
    },
    remoteParent,
  );
  consumer.addEvent("claimed", { "claim.owner": "worker-01" });
  consumer.setStatus({ code: SpanStatusCode.ERROR, message: "graph.throttled" });
  consumer.end();
  const child = tracer.startSpan(
    "worker-results publish",
    { kind: SpanKind.PRODUCER },
    trace.setSpan(ROOT_CONTEXT, consumer),
  );
  child.end();
  tracer.startSpan("root without parent").end();
  return memory.getFinishedSpans();
}

/** Exports `spans` with `exporter` and resolves with its result. */
function exportWith(exporter: SpanExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

describe("span records", () => {
  it("carry every field the OTLP encoders read: the thread sends the bytes the in-process exporter sends", async () => {
    const spans = makeSpans();
    // What crosses to the thread: plain records through the structured clone of postMessage.
    const rebuilt = createSpanRebuilder()(structuredClone(spans.map(toSpanRecord)));
    for (const protocol of ["http/json", "http/protobuf"] as const) {
      const receiver = await startReceiver();
      const direct = createOtlpExporter(protocol, receiver.url);
      expect((await exportWith(direct, spans)).code).toBe(ExportResultCode.SUCCESS);
      expect((await exportWith(direct, rebuilt)).code).toBe(ExportResultCode.SUCCESS);
      await direct.shutdown();
      expect(receiver.requests).toHaveLength(2);
      expect(receiver.requests[1]!.body.equals(receiver.requests[0]!.body), protocol).toBe(true);
    }
    // The JSON body names what the test set, so equal bodies mean the fields travelled.
    const receiver = await startReceiver();
    const json = createOtlpExporter("http/json", receiver.url);
    await exportWith(json, rebuilt);
    await json.shutdown();
    const body = receiver.requests[0]!.body.toString("utf8");
    for (const expected of [
      "vendor=opaque,other=1",
      "linked=yes",
      "claimed",
      "graph.throttled",
      "ünïcode ✓",
      "1.2.3",
    ]) {
      expect(body).toContain(expected);
    }
  });
});

describe("ThreadSpanExporter", () => {
  it("exports a BatchSpanProcessor's spans through its thread to the collector", async () => {
    const receiver = await startReceiver();
    const failures: string[] = [];
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": "matoolkit-thread-test" }),
      spanProcessors: [
        new BatchSpanProcessor(
          new ThreadSpanExporter({
            protocol: "http/protobuf",
            url: receiver.url,
            onThreadFailure: (reason) => failures.push(reason),
          }),
        ),
      ],
    });
    const tracer = provider.getTracer("matoolkit");
    for (let index = 0; index < 1_200; index += 1) tracer.startSpan(`step-${index}`).end();
    await provider.shutdown();
    expect(failures).toEqual([]);
    expect(receiver.requests.every((request) => request.contentType === "application/x-protobuf")).toBe(true);
    const payload = Buffer.concat(receiver.requests.map((request) => request.body)).toString("utf8");
    // Every span arrived (the processor sends at most 512 per request: three requests or more).
    expect(receiver.requests.length).toBeGreaterThanOrEqual(3);
    for (const index of [0, 511, 512, 1_199]) expect(payload).toContain(`step-${index}`);
  });

  it("reports the collector's refusal as a failed export, with its reason", async () => {
    const receiver = await startReceiver(400);
    const exporter = new ThreadSpanExporter({
      protocol: "http/json",
      url: receiver.url,
      onThreadFailure: () => undefined,
    });
    cleanups.push(() => exporter.shutdown());
    const result = await exportWith(exporter, makeSpans());
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error?.message).toMatch(/400|Bad Request/u);
    // The thread lives on: the next export is sent too.
    await exportWith(exporter, makeSpans());
    expect(receiver.requests).toHaveLength(2);
  });

  it("fails the exports of a thread that cannot start, says so once, and waits before trying again", async () => {
    const receiver = await startReceiver();
    const failures: string[] = [];
    const exporter = new ThreadSpanExporter({
      protocol: "http/protobuf",
      url: receiver.url,
      onThreadFailure: (reason) => failures.push(reason),
      threadEntry: new URL("./no-such-span-export-thread.ts", import.meta.url),
    });
    cleanups.push(() => exporter.shutdown());
    const first = await exportWith(exporter, makeSpans());
    expect(first.code).toBe(ExportResultCode.FAILED);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/^span export thread failed: /u);
    // Within the back-off the next batch is dropped at once, with no second thread and no log.
    const second = await exportWith(exporter, makeSpans());
    expect(second.code).toBe(ExportResultCode.FAILED);
    expect(second.error?.message).toContain("failed recently");
    expect(failures).toHaveLength(1);
    expect(receiver.requests).toEqual([]);
  });

  it("refuses exports once shut down", async () => {
    const receiver = await startReceiver();
    const exporter = new ThreadSpanExporter({
      protocol: "http/protobuf",
      url: receiver.url,
      onThreadFailure: () => undefined,
    });
    expect((await exportWith(exporter, makeSpans())).code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
    const after = await exportWith(exporter, makeSpans());
    expect(after.code).toBe(ExportResultCode.FAILED);
    expect(receiver.requests).toHaveLength(1);
  });
});
