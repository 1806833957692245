import { describe, expect, it } from "vitest";
import { platformConfigFromEnv } from "./platform-config.ts";

describe("observability configuration", () => {
  it("reads OpenTelemetry's standard variables and MATOOLKIT_METRICS_PORT/_HOST; all optional", () => {
    expect(platformConfigFromEnv({}).telemetry).toEqual({
      serviceName: undefined,
      sdkDisabled: false,
      otlpEndpoint: undefined,
      otlpTracesEndpoint: undefined,
      metricsPort: undefined,
      metricsHost: undefined,
    });
    expect(
      platformConfigFromEnv({
        OTEL_SERVICE_NAME: "matoolkit-orchestrator-eu",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel-collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://ingest.example/v1/traces",
        MATOOLKIT_METRICS_PORT: "9464",
        MATOOLKIT_METRICS_HOST: "127.0.0.1",
      }).telemetry,
    ).toEqual({
      serviceName: "matoolkit-orchestrator-eu",
      sdkDisabled: false,
      otlpEndpoint: "http://otel-collector:4318",
      otlpTracesEndpoint: "https://ingest.example/v1/traces",
      metricsPort: 9464,
      metricsHost: "127.0.0.1",
    });
  });

  it("turns telemetry off with OpenTelemetry's OTEL_SDK_DISABLED, naming the variable when it is not a boolean", () => {
    expect(platformConfigFromEnv({}).telemetry.sdkDisabled).toBe(false);
    expect(platformConfigFromEnv({ OTEL_SDK_DISABLED: "true" }).telemetry.sdkDisabled).toBe(true);
    expect(platformConfigFromEnv({ OTEL_SDK_DISABLED: "false" }).telemetry.sdkDisabled).toBe(false);
    expect(() => platformConfigFromEnv({ OTEL_SDK_DISABLED: "maybe" })).toThrow(/OTEL_SDK_DISABLED/);
  });

  it("reads the OTLP protocol, general and for traces (Container Apps' agent injects grpc)", () => {
    const telemetry = platformConfigFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel.service.k8se-apps:4317/",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
    }).telemetry;
    expect(telemetry).toMatchObject({ otlpProtocol: "grpc", otlpTracesProtocol: "http/json" });
    expect(() => platformConfigFromEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: "udp" })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL/,
    );
  });

  it("names the variable when a value is unusable", () => {
    expect(() => platformConfigFromEnv({ MATOOLKIT_METRICS_PORT: "70000" })).toThrow(
      /MATOOLKIT_METRICS_PORT/,
    );
    expect(() => platformConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
  });
});
