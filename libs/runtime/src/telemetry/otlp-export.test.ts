/**
 * Spans leave the process over the OTLP transport the environment names, to a real receiver on
 * loopback: OTLP/gRPC (what Azure Container Apps' managed OpenTelemetry agent accepts, and announces
 * with OTEL_EXPORTER_OTLP_PROTOCOL=grpc: learn.microsoft.com/azure/container-apps/
 * opentelemetry-agents, "Environment variables") and OTLP/HTTP.
 */
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import { matoolkitTracer, otlpTracesProtocol, otlpTracesUrl, startTracing } from "./tracing.ts";

const logger = createLogger({ level: "silent", name: "otlp-export-test" });
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A gRPC server with OTLP's trace service (opentelemetry-proto, collector/trace/v1: the method
 * `opentelemetry.proto.collector.trace.v1.TraceService/Export`). Requests are kept as the bytes
 * on the wire: protobuf carries strings as UTF-8, so a span's name is found in them as is.
 */
async function startGrpcReceiver(): Promise<{ url: string; requests: Buffer[] }> {
  const requests: Buffer[] = [];
  const server = new grpc.Server();
  const asIs = (bytes: Buffer) => bytes;
  server.addService(
    {
      Export: {
        path: "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
        requestStream: false,
        responseStream: false,
        requestSerialize: asIs,
        requestDeserialize: asIs,
        responseSerialize: asIs,
        responseDeserialize: asIs,
      },
    },
    {
      Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        requests.push(call.request);
        // An empty ExportTraceServiceResponse: everything accepted.
        callback(null, Buffer.alloc(0));
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error === null ? resolve(bound) : reject(error),
    ),
  );
  cleanups.push(() => new Promise((resolve) => server.tryShutdown(() => resolve())));
  return { url: `http://127.0.0.1:${port}/`, requests };
}

async function startHttpReceiver(): Promise<{
  url: string;
  requests: Array<{ path: string; contentType: string; body: string }>;
}> {
  const requests: Array<{ path: string; contentType: string; body: string }> = [];
  const server: HttpServer = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests.push({
        path: request.url ?? "",
        contentType: request.headers["content-type"] ?? "",
        body: Buffer.concat(chunks).toString("utf8"),
      });
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** Starts tracing as the platform does (from the environment's settings), ends one span, flushes. */
async function exportOneSpan(settings: Parameters<typeof otlpTracesUrl>[0], spanName: string): Promise<void> {
  const url = otlpTracesUrl(settings);
  const tracing = startTracing({
    serviceName: "matoolkit-otlp-test",
    ...(url === undefined ? {} : { otlpTracesUrl: url, otlpTracesProtocol: otlpTracesProtocol(settings) }),
    logger,
  });
  matoolkitTracer().startSpan(spanName).end();
  await tracing.shutdown();
}

describe("OTLP trace export", () => {
  it("exports over gRPC to the endpoint as is when OTEL_EXPORTER_OTLP_PROTOCOL=grpc (Container Apps' agent)", async () => {
    const receiver = await startGrpcReceiver();
    await exportOneSpan({ otlpEndpoint: receiver.url, otlpProtocol: "grpc" }, "batch.advance-grpc");
    expect(receiver.requests).toHaveLength(1);
    const payload = receiver.requests[0]!.toString("latin1");
    expect(payload).toContain("batch.advance-grpc");
    expect(payload).toContain("matoolkit-otlp-test");
  });

  it("exports binary protobuf over HTTP to <endpoint>/v1/traces by default (http/protobuf)", async () => {
    const receiver = await startHttpReceiver();
    await exportOneSpan({ otlpEndpoint: receiver.url }, "batch.advance-http");
    expect(receiver.requests.map((request) => request.path)).toEqual(["/v1/traces"]);
    // OTLP/HTTP: "Binary-encoded Protobuf payloads MUST use Content-Type application/x-protobuf"
    // (opentelemetry-proto, docs/specification.md); a JSON body would open with `{`.
    expect(receiver.requests[0]!.contentType).toBe("application/x-protobuf");
    expect(receiver.requests[0]!.body.startsWith("{")).toBe(false);
    expect(receiver.requests[0]!.body).toContain("batch.advance-http");
  });

  it("exports JSON when OTEL_EXPORTER_OTLP_PROTOCOL=http/json", async () => {
    const receiver = await startHttpReceiver();
    await exportOneSpan({ otlpEndpoint: receiver.url, otlpProtocol: "http/json" }, "batch.advance-json");
    expect(receiver.requests[0]!.contentType).toBe("application/json");
    const payload = JSON.parse(receiver.requests[0]!.body) as { resourceSpans: unknown[] };
    expect(JSON.stringify(payload.resourceSpans)).toContain("batch.advance-json");
  });

  it("lets OTEL_EXPORTER_OTLP_TRACES_PROTOCOL override the general protocol", async () => {
    const receiver = await startHttpReceiver();
    await exportOneSpan(
      { otlpEndpoint: receiver.url, otlpProtocol: "grpc", otlpTracesProtocol: "http/protobuf" },
      "batch.advance-override",
    );
    expect(receiver.requests.map((request) => request.path)).toEqual(["/v1/traces"]);
  });
});

describe("otlpTracesUrl and otlpTracesProtocol", () => {
  it("uses a gRPC endpoint as is, and appends /v1/traces for HTTP", () => {
    const agent = { otlpEndpoint: "http://otel.service.k8se-apps:4317/", otlpProtocol: "grpc" } as const;
    expect(otlpTracesProtocol(agent)).toBe("grpc");
    expect(otlpTracesUrl(agent)).toBe("http://otel.service.k8se-apps:4317/");
    expect(otlpTracesProtocol({})).toBe("http/protobuf");
    expect(otlpTracesUrl({ otlpEndpoint: "http://collector:4318/" })).toBe("http://collector:4318/v1/traces");
    expect(
      otlpTracesUrl({
        otlpEndpoint: "http://collector:4317",
        otlpTracesEndpoint: "https://x.example/traces",
      }),
    ).toBe("https://x.example/traces");
  });
});
