import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../logger.ts";
import type { Metrics } from "./metrics.ts";

/**
 * `GET /metrics` in the Prometheus text format. Unauthenticated, like `/healthz`: scrapers carry
 * no token, and the content is counts and durations labelled by outcomes, reason codes, topics
 * and route patterns (metrics.ts), never member data or secrets. Keep the port off the public
 * ingress (the admin API's ingress exposes it; restrict `/metrics` there if that matters).
 */
export async function sendMetrics(metrics: Metrics, response: ServerResponse): Promise<void> {
  const { contentType, body } = await metrics.expose();
  response.writeHead(200, { "content-type": contentType, "cache-control": "no-store" });
  response.end(body);
}

export interface MetricsServerOptions {
  readonly host: string;
  /** MATOOLKIT_METRICS_PORT; 0 picks a free port (tests). */
  readonly port: number;
  readonly metrics: Metrics;
  /** `/readyz` answers 200 once this says so (the platform's runtime is ready). */
  readonly ready: () => boolean;
  readonly logger: Logger;
}

export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The probes and `/metrics` of a service that has no HTTP server of its own outside Dapr (the
 * orchestrator, worker and scheduler run as single services): `/healthz`, `/readyz`, `/metrics`.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const logger = options.logger.child({ component: "metrics-server" });
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? "/", "http://metrics").pathname;
    if (request.method !== "GET") return send(response, 405, { error: "method not allowed" });
    switch (path) {
      case "/healthz":
        return send(response, 200, { status: "alive" });
      case "/readyz": {
        const ready = options.ready();
        return send(response, ready ? 200 : 503, { status: ready ? "ready" : "starting" });
      }
      case "/metrics":
        return sendMetrics(options.metrics, response);
      default:
        return send(response, 404, { error: "not found" });
    }
  };
  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      logger.warn({ err: error }, "metrics request failed");
      if (!response.headersSent) send(response, 500, { error: "internal error" });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  logger.info({ port }, "health and metrics listening");
  return {
    url: `http://${options.host === "0.0.0.0" ? "127.0.0.1" : options.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  response.end(JSON.stringify(body));
}
