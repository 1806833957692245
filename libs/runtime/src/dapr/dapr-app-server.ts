import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createHash, timingSafeEqual } from "node:crypto";
import type { Logger } from "../logger.ts";
import { sendMetrics } from "../telemetry/metrics-endpoint.ts";
import { processMetrics, type Metrics } from "../telemetry/metrics.ts";

/** What a topic route answers Dapr (the pub/sub response contract). */
export type DaprDeliveryStatus = "SUCCESS" | "RETRY" | "DROP";

export type TopicRouteHandler = (cloudEvent: unknown) => Promise<DaprDeliveryStatus>;
export type JobHandler = (jobName: string, data: unknown) => Promise<void>;

export interface DaprAppServerOptions {
  readonly host: string;
  readonly port: number;
  /** APP_API_TOKEN: when set, Dapr sends it as `dapr-api-token` and nothing else may call us. */
  readonly appApiToken?: string;
  readonly logger: Logger;
  /** Served at `GET /metrics` (unauthenticated, like the probes); default the process-wide ones. */
  readonly metrics?: Metrics;
}

/**
 * The app side of the sidecar protocol, on its own port (the admin API keeps its own server and
 * auth): `GET /dapr/subscribe` (programmatic subscriptions), `POST /dapr/topics/…` (deliveries),
 * `POST /job/{name}` (Jobs API triggers), and `/healthz` + `/readyz` + `/metrics` for the platform.
 * Adapters register routes before `listen()`: daprd reads `/dapr/subscribe` once, when the app
 * port first answers, so everything announced must be known by then.
 */
export interface DaprAppServer {
  /** Adds to what `GET /dapr/subscribe` answers (called at each request). */
  announceSubscriptions(provider: () => readonly unknown[]): void;
  route(path: string, handler: TopicRouteHandler): void;
  /** Handles `POST /job/{name}` for names starting with `prefix` (longest prefix wins). */
  onJobs(prefix: string, handler: JobHandler): void;
  setReady(ready: boolean): void;
  /**
   * Resolves the first time the sidecar reads `GET /dapr/subscribe`: it subscribes to the broker
   * right after (wait-for-subscriptions.ts).
   */
  readonly subscriptionsRead: Promise<void>;
  listen(): Promise<{ readonly port: number; readonly url: string }>;
  readonly listening: boolean;
  close(): Promise<void>;
}

export function createDaprAppServer(options: DaprAppServerOptions): DaprAppServer {
  const logger = options.logger.child({ component: "dapr-app" });
  const providers: Array<() => readonly unknown[]> = [];
  const routes = new Map<string, TopicRouteHandler>();
  const jobHandlers = new Map<string, JobHandler>();
  let ready = false;
  let server: Server | undefined;
  let markSubscriptionsRead!: () => void;
  const subscriptionsRead = new Promise<void>((resolve) => (markSubscriptionsRead = resolve));

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? "/", "http://app").pathname;
    if (request.method === "GET" && path === "/healthz") return send(response, 200, { status: "alive" });
    if (request.method === "GET" && path === "/readyz") {
      return send(response, ready ? 200 : 503, { status: ready ? "ready" : "waiting for the Dapr sidecar" });
    }
    // Prometheus scrapes carry no dapr-api-token; the text holds no member data (metrics.ts).
    if (request.method === "GET" && path === "/metrics") {
      return sendMetrics(options.metrics ?? processMetrics(), response);
    }
    if (
      options.appApiToken !== undefined &&
      !sameToken(request.headers["dapr-api-token"], options.appApiToken)
    ) {
      return send(response, 401, { error: "missing or wrong dapr-api-token" });
    }
    if (request.method === "GET" && path === "/dapr/subscribe") {
      send(
        response,
        200,
        providers.flatMap((provider) => provider()),
      );
      return markSubscriptionsRead();
    }
    if (request.method === "POST" && routes.has(path)) {
      const body = await readJson(request);
      // An unreadable body will never parse on a redelivery either.
      if (body === undefined) return send(response, 200, { status: "DROP" });
      const status = await routes.get(path)!(body);
      return send(response, 200, { status });
    }
    if (request.method === "POST" && path.startsWith("/job/")) {
      const name = decodeURIComponent(path.slice("/job/".length));
      const handler = jobHandlerFor(name);
      if (handler === undefined) return send(response, 404, { error: `no handler for job ${name}` });
      const data = await readJson(request);
      await handler(name, data);
      return send(response, 200, {});
    }
    if (request.method === "POST") {
      // A delivery to a route this process does not (or not yet) serve: never 404. daprd 1.16
      // acknowledges a 404 and drops the message without dead-lettering it; only 1.17+ forwards it
      // to the dead-letter topic (dapr/dapr pkg/runtime/subscription/postman/http/http.go, the
      // StatusNotFound branch). RETRY is retried under the inbound resiliency policy and then
      // dead-lettered by every version, so the message is never lost.
      request.resume();
      return send(response, 200, { status: "RETRY" });
    }
    return send(response, 404, { error: "not found" });
  };

  const jobHandlerFor = (name: string): JobHandler | undefined => {
    const prefix = [...jobHandlers.keys()]
      .filter((candidate) => name.startsWith(candidate))
      .sort((a, b) => b.length - a.length)[0];
    return prefix === undefined ? undefined : jobHandlers.get(prefix);
  };

  return {
    announceSubscriptions: (provider) => void providers.push(provider),
    route: (path, handler) => void routes.set(path, handler),
    onJobs: (prefix, handler) => void jobHandlers.set(prefix, handler),
    setReady: (value) => void (ready = value),
    subscriptionsRead,
    get listening() {
      return server !== undefined;
    },
    listen() {
      if (server !== undefined) throw new Error("The Dapr app server is already listening");
      const created = createServer((request, response) => {
        handle(request, response).catch((error: unknown) => {
          // A handler that threw is never acknowledged: 500 makes Dapr retry the delivery.
          logger.error({ err: error, path: request.url }, "Dapr callback failed");
          if (!response.headersSent) send(response, 500, { error: "internal error" });
        });
      });
      server = created;
      return new Promise((resolve, reject) => {
        created.once("error", reject);
        created.listen(options.port, options.host, () => {
          const { port } = created.address() as AddressInfo;
          logger.info({ port }, "Dapr app callbacks listening");
          resolve({ port, url: `http://${options.host === "0.0.0.0" ? "127.0.0.1" : options.host}:${port}` });
        });
      });
    },
    async close() {
      const closing = server;
      server = undefined;
      if (closing === undefined) return;
      await new Promise<void>((resolve) => {
        closing.close(() => resolve());
        closing.closeAllConnections();
      });
    },
  };
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/** Compares in constant time (digests of equal length), so timing tells nothing of the token. */
function sameToken(presented: string | string[] | undefined, expected: string): boolean {
  if (typeof presented !== "string") return false;
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}
