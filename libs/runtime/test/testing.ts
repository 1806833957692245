// Test-only entry point (`@matoolkit/runtime/testing`): stand-ins that production code never
// imports. The Dapr Workflow stand-in loads Dapr's SDK (and its protobuf copy) on import.
export { startTaskHubSidecarStandIn } from "./dapr/workflow/task-hub-sidecar-stand-in.ts";
export type {
  TaskHubSidecarStandIn,
  TaskHubSidecarStandInOptions,
} from "./dapr/workflow/task-hub-sidecar-stand-in.ts";
export { parsePrometheusText, sampleValue } from "./telemetry/prometheus-text.ts";
export type { PrometheusSample } from "./telemetry/prometheus-text.ts";
export { startInMemoryTracing } from "./telemetry/in-memory-tracing.ts";
export type { InMemoryTracing } from "./telemetry/in-memory-tracing.ts";
