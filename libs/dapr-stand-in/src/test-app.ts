import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A tiny Dapr app for the stand-in's own tests: serves `GET /dapr/subscribe`, records every request
 * and answers callbacks with whatever the test's handler says.
 */

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface AppReply {
  readonly status: number;
  readonly body?: unknown;
}

export type AppHandler = (request: RecordedRequest) => AppReply | Promise<AppReply>;

export interface TestApp {
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  /** Requests to a path, bodies parsed as JSON. */
  jsonBodies(path: string): unknown[];
  waitForRequests(path: string, count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  stop(): Promise<void>;
}

export interface TestAppOptions {
  readonly subscriptions?: unknown;
  readonly handler?: AppHandler;
  readonly port?: number;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const requests: RecordedRequest[] = [];
  const handler: AppHandler = options.handler ?? (() => ({ status: 200 }));
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const recorded: RecordedRequest = {
        method: request.method ?? "GET",
        path: new URL(request.url ?? "/", "http://app").pathname,
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(recorded);
      const reply =
        recorded.method === "GET" && recorded.path === "/dapr/subscribe"
          ? Promise.resolve<AppReply>({ status: 200, body: options.subscriptions ?? [] })
          : Promise.resolve(handler(recorded));
      reply
        .then(({ status, body }) => {
          const payload = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
          response.writeHead(status, payload === "" ? {} : { "content-type": "application/json" });
          response.end(payload);
        })
        .catch(() => {
          response.writeHead(500);
          response.end();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    jsonBodies: (path) =>
      requests
        .filter((request) => request.path === path)
        .map((request) => JSON.parse(request.body) as unknown),
    async waitForRequests(path, count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const matching = requests.filter((request) => request.path === path);
        if (matching.length >= count) return matching;
        if (Date.now() > deadline) {
          throw new Error(
            `expected ${count} request(s) to ${path} within ${timeoutMs} ms, got ${matching.length}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
