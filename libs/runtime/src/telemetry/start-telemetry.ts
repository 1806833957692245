import { setOutboxAmbientProperties } from "@matoolkit/db";
import type { Logger } from "../logger.ts";
import type { MessageBus } from "../ports/index.ts";
import { instrumentMessageBus } from "./instrumented-bus.ts";
import { startMetricsServer, type MetricsServer } from "./metrics-endpoint.ts";
import { processMetrics, type Metrics } from "./metrics.ts";
import { telemetryProperties, withTraceContext } from "./trace-properties.ts";
import { otlpTracesProtocol, otlpTracesUrl, startTracing, type OtlpProtocol } from "./tracing.ts";

/** The entry point's observability settings (platform-config.ts parses them from OTEL_* etc.). */
export interface TelemetryConfig {
  /** OTEL_SERVICE_NAME; default `matoolkit-<service>`. */
  readonly serviceName?: string | undefined;
  /**
   * OTEL_SDK_DISABLED=true: no traces (no tracer provider: every span is a no-op, none exported,
   * whatever the OTLP settings), no trace context nor `published-at` in messages, and the bus is
   * not instrumented (no message age or timer lag histograms). /healthz, /readyz and the other
   * metrics stay. For a deployment that does not collect traces, and to measure what telemetry
   * costs (bench/telemetry-cost.ts).
   */
  readonly sdkDisabled?: boolean | undefined;
  /** OTEL_EXPORTER_OTLP_ENDPOINT (base URL); unset = traces are not exported. */
  readonly otlpEndpoint?: string | undefined;
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (full traces URL); wins over the base URL. */
  readonly otlpTracesEndpoint?: string | undefined;
  /** OTEL_EXPORTER_OTLP_PROTOCOL: grpc, http/protobuf (default) or http/json. */
  readonly otlpProtocol?: OtlpProtocol | undefined;
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL; wins over OTEL_EXPORTER_OTLP_PROTOCOL. */
  readonly otlpTracesProtocol?: OtlpProtocol | undefined;
  /** MATOOLKIT_METRICS_PORT: a server with /healthz, /readyz and /metrics (outside Dapr). */
  readonly metricsPort?: number | undefined;
  /** Interface of that server; default 0.0.0.0 (a scraper in another pod reaches it). */
  readonly metricsHost?: string | undefined;
}

export interface Telemetry {
  readonly metrics: Metrics;
  /** The metrics server's URL, when MATOOLKIT_METRICS_PORT started one. */
  readonly metricsUrl?: string;
  /** The bus with spans, trace context in every message, and queue/timer lag (instrumented-bus.ts). */
  instrumentBus<B extends MessageBus>(bus: B, adapter: "embedded" | "dapr"): B;
  /**
   * Returns `ready` as is, and turns the metrics server's /readyz to 200 once it resolves (the
   * platform's own readiness: the database and runtime are up).
   */
  readyWhen<T>(ready: Promise<T>): Promise<T>;
  /** Stops the metrics server, flushes spans, uninstalls the outbox properties. */
  stop(): Promise<void>;
}

export interface StartTelemetryOptions {
  readonly config: TelemetryConfig;
  /** The process's service (`orchestrator`, `all-in-one`…): the default service name. */
  readonly service: string;
  readonly logger: Logger;
}

/**
 * Everything a process does for traces and metrics, in one call from the platform boot: starts
 * tracing (exporting over OTLP, HTTP or gRPC, when an endpoint is configured), makes every outbox row
 * carry the active trace context and its enqueue time, starts the optional metrics server, and
 * hands back the bus instrumentation and the process-wide instruments.
 */
export async function startTelemetry(options: StartTelemetryOptions): Promise<Telemetry> {
  const { config, logger } = options;
  const enabled = config.sdkDisabled !== true;
  const tracesUrl = otlpTracesUrl(config);
  const tracing = enabled
    ? startTracing({
        serviceName: config.serviceName ?? defaultServiceName(options.service),
        ...(tracesUrl === undefined
          ? {}
          : { otlpTracesUrl: tracesUrl, otlpTracesProtocol: otlpTracesProtocol(config) }),
        logger,
      })
    : undefined;
  if (!enabled) logger.info("telemetry disabled (OTEL_SDK_DISABLED): no traces, no message lag metrics");
  const restoreOutbox = enabled
    ? setOutboxAmbientProperties(() =>
        withTraceContext({ [telemetryProperties.publishedAt]: new Date().toISOString() }),
      )
    : () => undefined;
  const metrics = processMetrics();
  let ready = false;
  let server: MetricsServer | undefined;
  try {
    server =
      config.metricsPort === undefined
        ? undefined
        : await startMetricsServer({
            host: config.metricsHost ?? "0.0.0.0",
            port: config.metricsPort,
            metrics,
            ready: () => ready,
            logger,
          });
  } catch (error) {
    restoreOutbox();
    await tracing?.shutdown();
    throw error;
  }
  return {
    metrics,
    ...(server === undefined ? {} : { metricsUrl: server.url }),
    instrumentBus: (bus, adapter) =>
      enabled
        ? instrumentMessageBus(bus, { system: adapter === "embedded" ? "pg-boss" : "dapr", metrics })
        : bus,
    readyWhen(readiness) {
      void readiness.then(
        () => (ready = true),
        () => undefined,
      );
      return readiness;
    },
    async stop() {
      await server?.close();
      restoreOutbox();
      await tracing?.shutdown();
    },
  };
}

/** `matoolkit-orchestrator`; a name that already says matoolkit stays as it is. */
export function defaultServiceName(service: string): string {
  return service.startsWith("matoolkit") ? service : `matoolkit-${service}`;
}
