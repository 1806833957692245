// Traces, metrics and request ids (issue 15): see each module.
export { instrumentMessageBus } from "./instrumented-bus.ts";
export type { InstrumentBusOptions } from "./instrumented-bus.ts";
export { createMetrics, processMetrics } from "./metrics.ts";
export type { CreateMetricsOptions, Metrics } from "./metrics.ts";
export type { PacingMetrics, PacingMetricsReading } from "./pacing-metrics.ts";
export type { AlertMetrics, OpenAlertCount } from "./alert-metrics.ts";
export { sendMetrics, startMetricsServer } from "./metrics-endpoint.ts";
export type { MetricsServer, MetricsServerOptions } from "./metrics-endpoint.ts";
export { httpTelemetry, requestTelemetryOf, REQUEST_ID_HEADER } from "./http-telemetry.ts";
export type { HttpTelemetryOptions, RequestTelemetry } from "./http-telemetry.ts";
export { defaultServiceName, startTelemetry } from "./start-telemetry.ts";
export type { StartTelemetryOptions, Telemetry, TelemetryConfig } from "./start-telemetry.ts";
export {
  publishedAtOf,
  telemetryProperties,
  traceContextOf,
  withPublishedAt,
  withTraceContext,
} from "./trace-properties.ts";
export {
  matoolkitTracer,
  otlpTracesProtocol,
  otlpTracesUrl,
  startTracing,
  TRACER_NAME,
  type OtlpProtocol,
} from "./tracing.ts";
export type { Tracing, TracingOptions } from "./tracing.ts";
