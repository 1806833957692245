import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { TokenVerifier } from "../auth/index.ts";
import { createLogger } from "@matoolkit/runtime";
import { errorHandler, notFound } from "../http/api-error.ts";
import { mountOperations } from "./mount-operations.ts";
import { defineOperation, type ApiDeps } from "./operation.ts";

/**
 * Streamed responses (operation.ts `streamed`), on a bare app: a slow or vanished client holds the
 * producer back or stops it, a problem can still be answered before the first byte, and a producer
 * failing mid-way cuts the transfer instead of ending it cleanly.
 */
let close: (() => Promise<void>) | undefined;

afterEach(async () => {
  await close?.();
  close = undefined;
});

async function serve(stream: (id: number) => AsyncIterable<string>): Promise<string> {
  const operation = defineOperation({
    method: "get",
    path: "/stream/{id}",
    operationId: "streamTest",
    tag: "test",
    summary: "test",
    access: "public",
    params: z.object({ id: z.coerce.number() }),
    errors: ["resource.not_found"],
    responses: { 200: { description: "text", schema: z.string(), contentType: "text/csv", streamed: true } },
  }).handle(({ params }) => {
    if (params.id === 404) throw notFound("no such thing");
    return { status: 200, stream: stream(params.id), headers: { "X-Test": "yes" } };
  });
  const app = express();
  const router = express.Router();
  mountOperations(router, [operation], { verifier: {} as TokenVerifier, deps: {} as ApiDeps });
  app.use(router);
  app.use(errorHandler(createLogger({ level: "silent", name: "stream-test" })));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("streamed responses", () => {
  it("sends the chunks chunked, with the handler's headers", async () => {
    const url = await serve(async function* () {
      yield "a,b\r\n";
      yield "1,2\r\n";
    });
    const response = await fetch(`${url}/stream/1`);
    expect(response.status).toBe(200);
    expect(response.headers.get("transfer-encoding")).toBe("chunked");
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("x-test")).toBe("yes");
    expect(await response.text()).toBe("a,b\r\n1,2\r\n");
  });

  it("stops asking the producer for chunks once the client has gone", async () => {
    let produced = 0;
    let stopped!: () => void;
    const finished = new Promise<void>((resolve) => (stopped = resolve));
    const url = await serve(async function* () {
      try {
        // Endless: only the client going away can end it.
        for (;;) {
          produced += 1;
          yield "x".repeat(64 * 1024);
        }
      } finally {
        stopped();
      }
    });
    const controller = new AbortController();
    const response = await fetch(`${url}/stream/1`, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await finished;
    // Backpressure: it produced what the socket buffers held, not an unbounded amount.
    expect(produced).toBeLessThan(1000);
  });

  it("answers a problem thrown before the stream starts, and cuts the transfer when the producer fails later", async () => {
    const url = await serve(async function* () {
      yield "first row\r\n";
      throw new Error("the database went away");
    });
    const missing = await fetch(`${url}/stream/404`);
    expect(missing.status).toBe(404);
    expect((await missing.json()) as unknown).toMatchObject({ code: "resource.not_found" });

    // Whether the headers made it out before the connection was cut or not, the client never gets
    // a complete response.
    await expect(fetch(`${url}/stream/1`).then((cut) => cut.text())).rejects.toThrow();
  });
});
