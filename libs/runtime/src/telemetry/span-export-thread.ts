// The span export thread: encodes finished spans (OTLP protobuf, JSON or gRPC) and sends them to
// the collector, off the event loop that runs the services (thread-span-exporter.ts starts it).
//
// This file runs as a worker thread's entry, also in the image, where it is the one source file
// shipped beside the bundle (Dockerfile; Node 24 strips its types). So it imports npm packages
// and Node built-ins only, never another file of this repository (types excepted: erased).
import { isMainThread, parentPort, workerData, type MessagePort } from "node:worker_threads";
import type { Attributes, HrTime, Link, SpanContext, SpanKind, SpanStatus } from "@opentelemetry/api";
import { ExportResultCode, TraceState, type ExportResult } from "@opentelemetry/core";
import { OTLPTraceExporter as OTLPGrpcTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as OTLPJsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OTLPProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes, type Resource } from "@opentelemetry/resources";
import type { ReadableSpan, SpanExporter, TimedEvent } from "@opentelemetry/sdk-trace-base";

/** What `workerData` carries: marks the thread as ours, and names the collector. */
export interface SpanExportThreadData {
  readonly role: "matoolkit-span-export";
  readonly protocol: "grpc" | "http/protobuf" | "http/json";
  readonly url: string;
}

/** A span's context as plain data: the trace state travels as its W3C header value. */
export interface SpanContextRecord {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly isRemote?: boolean;
  readonly traceState?: string;
}

/**
 * A finished span as plain data (structured-clonable): what the OTLP encoders read of a
 * ReadableSpan (@opentelemetry/otlp-transformer, trace/protobuf/trace-serializer.js and
 * trace/internal.js), nothing more.
 */
export interface SpanRecord {
  readonly name: string;
  readonly kind: SpanKind;
  readonly context: SpanContextRecord;
  readonly parent?: SpanContextRecord;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly duration: HrTime;
  readonly status: SpanStatus;
  readonly attributes: Attributes;
  readonly events: readonly TimedEvent[];
  readonly links: ReadonlyArray<{
    readonly context: SpanContextRecord;
    readonly attributes?: Attributes;
    readonly droppedAttributesCount?: number;
  }>;
  readonly droppedAttributesCount: number;
  readonly droppedEventsCount: number;
  readonly droppedLinksCount: number;
  /** Resource and scope: the same for every span of a process, interned on this side. */
  readonly resource: { readonly attributes: Attributes; readonly schemaUrl?: string };
  readonly scope: { readonly name: string; readonly version?: string; readonly schemaUrl?: string };
}

/** Main thread → export thread. */
export type ToExportThread =
  | { readonly type: "export"; readonly id: number; readonly spans: readonly SpanRecord[] }
  | { readonly type: "flush"; readonly id: number }
  | { readonly type: "shutdown"; readonly id: number };

/** Export thread → main thread: the answer to the message with that id. */
export interface FromExportThread {
  readonly id: number;
  readonly code: ExportResultCode;
  /** The failure's message only (an Error does not survive the crossing as itself). */
  readonly error?: string;
}

/**
 * ReadableSpans again, for the exporter. Spans of one resource and scope share one object each:
 * the protobuf encoder groups by object identity, and one group per batch is what the in-thread
 * exporter sent.
 */
export function createSpanRebuilder(): (records: readonly SpanRecord[]) => ReadableSpan[] {
  const resources = new Map<string, Resource>();
  const scopes = new Map<string, SpanRecord["scope"]>();
  const internResource = (record: SpanRecord["resource"]): Resource => {
    const key = JSON.stringify([record.attributes, record.schemaUrl ?? ""]);
    let resource = resources.get(key);
    if (resource === undefined) {
      resource = resourceFromAttributes(
        record.attributes,
        record.schemaUrl === undefined ? {} : { schemaUrl: record.schemaUrl },
      );
      resources.set(key, resource);
    }
    return resource;
  };
  const internScope = (scope: SpanRecord["scope"]): SpanRecord["scope"] => {
    const key = `${scope.name}@${scope.version ?? ""}:${scope.schemaUrl ?? ""}`;
    let interned = scopes.get(key);
    if (interned === undefined) scopes.set(key, (interned = scope));
    return interned;
  };
  return (records) =>
    records.map((record): ReadableSpan => {
      const context = toSpanContext(record.context);
      return {
        name: record.name,
        kind: record.kind,
        spanContext: () => context,
        ...(record.parent === undefined ? {} : { parentSpanContext: toSpanContext(record.parent) }),
        startTime: record.startTime,
        endTime: record.endTime,
        duration: record.duration,
        ended: true,
        status: record.status,
        attributes: record.attributes,
        events: [...record.events],
        links: record.links.map((link): Link => ({
          context: toSpanContext(link.context),
          ...(link.attributes === undefined ? {} : { attributes: link.attributes }),
          ...(link.droppedAttributesCount === undefined
            ? {}
            : { droppedAttributesCount: link.droppedAttributesCount }),
        })),
        droppedAttributesCount: record.droppedAttributesCount,
        droppedEventsCount: record.droppedEventsCount,
        droppedLinksCount: record.droppedLinksCount,
        resource: internResource(record.resource),
        instrumentationScope: internScope(record.scope),
      };
    });
}

function toSpanContext(record: SpanContextRecord): SpanContext {
  return {
    traceId: record.traceId,
    spanId: record.spanId,
    traceFlags: record.traceFlags,
    ...(record.isRemote === undefined ? {} : { isRemote: record.isRemote }),
    ...(record.traceState === undefined ? {} : { traceState: new TraceState(record.traceState) }),
  };
}

/** The exporter of the protocol: each its own package (-http sends JSON only). */
export function createOtlpExporter(protocol: SpanExportThreadData["protocol"], url: string): SpanExporter {
  if (protocol === "grpc") return new OTLPGrpcTraceExporter({ url });
  if (protocol === "http/json") return new OTLPJsonTraceExporter({ url });
  return new OTLPProtobufTraceExporter({ url });
}

/** Answers every message of `port` with the exporter's outcome; closes the port after shutdown. */
export function serveSpanExport(port: MessagePort, exporter: SpanExporter): void {
  const rebuild = createSpanRebuilder();
  const answer = (id: number, result: ExportResult): void => {
    const reply: FromExportThread = {
      id,
      code: result.code,
      ...(result.error === undefined ? {} : { error: result.error.message }),
    };
    port.postMessage(reply);
  };
  const settle = (id: number, work: Promise<void>, after?: () => void): void => {
    work.then(
      () => answer(id, { code: ExportResultCode.SUCCESS }),
      (error: unknown) =>
        answer(id, {
          code: ExportResultCode.FAILED,
          error: error instanceof Error ? error : new Error(String(error)),
        }),
    );
    if (after !== undefined) void work.finally(after);
  };
  port.on("message", (message: ToExportThread) => {
    switch (message.type) {
      case "export": {
        let spans: ReadableSpan[];
        try {
          spans = rebuild(message.spans);
        } catch (error) {
          answer(message.id, { code: ExportResultCode.FAILED, error: error as Error });
          return;
        }
        exporter.export(spans, (result) => answer(message.id, result));
        return;
      }
      case "flush":
        settle(message.id, exporter.forceFlush?.() ?? Promise.resolve());
        return;
      case "shutdown":
        settle(message.id, exporter.shutdown(), () => port.close());
        return;
    }
  });
}

function isSpanExportThread(data: unknown): data is SpanExportThreadData {
  return (
    typeof data === "object" && data !== null && (data as { role?: unknown }).role === "matoolkit-span-export"
  );
}

if (!isMainThread && parentPort !== null && isSpanExportThread(workerData)) {
  serveSpanExport(parentPort, createOtlpExporter(workerData.protocol, workerData.url));
}
