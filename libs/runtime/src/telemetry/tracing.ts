import { context, propagation, trace, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as OTLPGrpcTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as OTLPJsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OTLPProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { Logger } from "../logger.ts";

/** The instrumentation scope of every span this code base makes. */
export const TRACER_NAME = "matoolkit";

export function matoolkitTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

export interface TracingOptions {
  /** `service.name` of the spans (OTEL_SERVICE_NAME; default matoolkit-<service>). */
  readonly serviceName: string;
  /**
   * Where traces are exported (otlpTracesUrl below). Absent (and no `exporter`): no spans are
   * recorded; the trace context a request or message brings still travels in every message
   * (startContextOnly).
   */
  readonly otlpTracesUrl?: string;
  /** How: OTLP over gRPC, or over HTTP (the default). */
  readonly otlpTracesProtocol?: OtlpProtocol;
  /** Tests: spans go to this exporter, one by one (an InMemorySpanExporter). */
  readonly exporter?: SpanExporter;
  readonly logger: Logger;
}

export interface Tracing {
  /** Flushes and stops the exporter (no-op for a caller that found tracing already started). */
  shutdown(): Promise<void>;
}

let started: { readonly serviceName: string } | undefined;

/**
 * Registers the process's tracer provider (only with an exporter: startContextOnly otherwise), the
 * AsyncLocalStorage context manager (so the active span follows awaits) and the W3C Trace Context
 * propagator. Once per process: a second call (all-in-one boots one platform for four services; a
 * test started tracing with its in-memory exporter before booting) keeps the first provider and
 * returns a shutdown that does nothing.
 */
export function startTracing(options: TracingOptions): Tracing {
  if (started !== undefined) {
    options.logger.debug({ serviceName: started.serviceName }, "tracing already started in this process");
    return { shutdown: async () => undefined };
  }
  if (options.exporter === undefined && options.otlpTracesUrl === undefined) {
    return startContextOnly(options);
  }
  const spanProcessors: SpanProcessor[] = [];
  if (options.exporter !== undefined) spanProcessors.push(new SimpleSpanProcessor(options.exporter));
  if (options.otlpTracesUrl !== undefined) {
    // Batched: export never sits on a request's or a delivery's path. Each protocol its own
    // exporter package: -http sends JSON only, whatever OTEL_EXPORTER_OTLP_PROTOCOL says, so the
    // default (http/protobuf) needs -proto (opentelemetry-js, experimental/packages/exporter-trace-otlp-proto).
    const protocol = options.otlpTracesProtocol ?? "http/protobuf";
    const exporter =
      protocol === "grpc"
        ? new OTLPGrpcTraceExporter({ url: options.otlpTracesUrl })
        : protocol === "http/json"
          ? new OTLPJsonTraceExporter({ url: options.otlpTracesUrl })
          : new OTLPProtobufTraceExporter({ url: options.otlpTracesUrl });
    spanProcessors.push(new BatchSpanProcessor(exporter));
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }),
    spanProcessors,
  });
  // Ours is the only provider of the process: clear whatever an earlier one left registered (the
  // API's globals outlive a module reload, e.g. between test files of one worker).
  disableGlobals();
  provider.register({ propagator: new W3CTraceContextPropagator() });
  started = { serviceName: options.serviceName };
  // The URL names a collector, never credentials (headers come from OTEL_EXPORTER_OTLP_HEADERS).
  options.logger.info(
    {
      serviceName: options.serviceName,
      exporting: options.otlpTracesUrl !== undefined,
      ...(options.otlpTracesUrl === undefined
        ? {}
        : { protocol: options.otlpTracesProtocol ?? "http/protobuf" }),
    },
    "tracing started",
  );
  return {
    async shutdown() {
      if (started === undefined) return;
      started = undefined;
      await provider.shutdown();
      disableGlobals();
    },
  };
}

/**
 * No exporter: spans would be made only to be dropped (issue 29: recording them cost a step about
 * 25 µs, some 5 % of its time on the services' event loop, bench/telemetry-per-message.ts), so no
 * SDK is installed. The API then does what
 * OpenTelemetry specifies without one: a span is a non-recording one carrying its parent's context
 * ("Behavior of the API in the absence of an installed SDK",
 * https://opentelemetry.io/docs/specs/otel/trace/api/#behavior-of-the-api-in-the-absence-of-an-installed-sdk).
 * With the context manager and the propagator registered, the trace context a request or a message
 * brings still travels on in every message (to Dapr's tracing, or a process that exports); a trace
 * starts only where one came in.
 */
function startContextOnly(options: TracingOptions): Tracing {
  disableGlobals();
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  started = { serviceName: options.serviceName };
  options.logger.info(
    { serviceName: options.serviceName, exporting: false },
    "tracing started: trace context only (no OTLP endpoint: no spans recorded)",
  );
  return {
    async shutdown() {
      if (started === undefined) return;
      started = undefined;
      disableGlobals();
    },
  };
}

function disableGlobals(): void {
  trace.disable();
  context.disable();
  propagation.disable();
}

/**
 * OTEL_EXPORTER_OTLP_PROTOCOL's values (opentelemetry.io/docs/specs/otel/protocol/exporter/).
 * `http/protobuf` and `http/json` both export with @opentelemetry/exporter-trace-otlp-http, which
 * sends JSON: OTLP/HTTP receivers take both encodings on the same path.
 */
export type OtlpProtocol = "grpc" | "http/protobuf" | "http/json";

export interface OtlpTracesSettings {
  readonly otlpEndpoint?: string | undefined;
  readonly otlpTracesEndpoint?: string | undefined;
  readonly otlpProtocol?: OtlpProtocol | undefined;
  readonly otlpTracesProtocol?: OtlpProtocol | undefined;
}

/**
 * OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf (the
 * specification's default). Azure Container Apps' managed OpenTelemetry agent injects
 * OTEL_EXPORTER_OTLP_PROTOCOL=grpc with a gRPC endpoint: "The managed agent only supports grpc"
 * (learn.microsoft.com/azure/container-apps/opentelemetry-agents, "Environment variables").
 */
export function otlpTracesProtocol(settings: OtlpTracesSettings): OtlpProtocol {
  return settings.otlpTracesProtocol ?? settings.otlpProtocol ?? "http/protobuf";
}

/**
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, else OTEL_EXPORTER_OTLP_ENDPOINT: as is for gRPC
 * (the service path is the RPC's), plus `/v1/traces` for HTTP (the OTLP exporter specification's
 * rule for the signal-less base URL).
 */
export function otlpTracesUrl(settings: OtlpTracesSettings): string | undefined {
  if (settings.otlpTracesEndpoint !== undefined) return settings.otlpTracesEndpoint;
  if (settings.otlpEndpoint === undefined) return undefined;
  if (otlpTracesProtocol(settings) === "grpc") return settings.otlpEndpoint;
  return `${settings.otlpEndpoint.replace(/\/+$/u, "")}/v1/traces`;
}
