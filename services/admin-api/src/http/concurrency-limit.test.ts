import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type RequestHandler } from "express";
import { createLogger } from "@matoolkit/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { errorHandler } from "./api-error.ts";
import {
  createHeavyRequestSlots,
  heavyRequestGate,
  holdingSlot,
  RETRY_AFTER_SECONDS,
} from "./concurrency-limit.ts";

/**
 * The heavy-request slots with a handler the test holds open (a gate, not timing): the third
 * request of a caller whose two are still running is refused at once; a slot comes back when its
 * work ends, not when the client goes away.
 */
const route = { method: "post", path: "/api/runbooks/{name}/plan" };
let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

interface Gate {
  /** Resolves when this many requests are inside the handler. */
  entered(count: number): Promise<void>;
  open(): void;
}

async function startApp(limits: { heavyPerCaller: number; heavyTotal: number }) {
  const slots = createHeavyRequestSlots(limits);
  let inside = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const gate: Gate = {
    entered: (count) =>
      new Promise((resolve) => {
        if (inside >= count) resolve();
        else waiters.push({ count, resolve });
      }),
    open,
  };
  const handler: RequestHandler = async (_req, res) => {
    inside += 1;
    for (const waiter of waiters.filter((w) => inside >= w.count)) waiter.resolve();
    await opened;
    res.json({ ok: true });
  };
  const app = express();
  // Stands in for authenticate(): the caller is the `x-caller` header.
  app.use((req, res, next) => {
    res.locals.principal = { subject: req.get("x-caller"), identity: "t", roles: ["Operator"], scopes: [] };
    next();
  });
  app.post("/plan", heavyRequestGate(route, slots), holdingSlot(handler));
  app.use(errorHandler(createLogger({ level: "silent", name: "concurrency-test" })));
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/plan`;
  const send = (caller: string, signal?: AbortSignal) =>
    fetch(url, { method: "POST", headers: { "x-caller": caller }, signal });
  return { gate, slots, send };
}

describe("heavy request slots", () => {
  it("answers a caller's third concurrent heavy request 429 with Retry-After, naming the limit", async () => {
    const { gate, send } = await startApp({ heavyPerCaller: 2, heavyTotal: 10 });
    const first = send("alice");
    const second = send("alice");
    await gate.entered(2);
    const third = await send("alice");
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBe(String(RETRY_AFTER_SECONDS));
    const problem = (await third.json()) as { code: string; detail: string };
    expect(problem.code).toBe("request.too_many_in_flight");
    expect(problem.detail).toMatch(
      /^You already have 2 heavy requests running \(MATOOLKIT_HEAVY_REQUESTS_PER_CALLER\); POST \/api\/runbooks\/\{name\}\/plan waits/,
    );
    // Another caller is not held back by alice's requests.
    const bob = send("bob");
    await gate.entered(3);
    gate.open();
    expect((await Promise.all([first, second, bob])).map((r) => r.status)).toEqual([200, 200, 200]);
    // Her slots came back with the answers.
    expect((await send("alice")).status).toBe(200);
  });

  it("caps all callers together (the server's limit)", async () => {
    const { gate, send } = await startApp({ heavyPerCaller: 2, heavyTotal: 2 });
    const running = [send("alice"), send("bob")];
    await gate.entered(2);
    const refused = await send("carol");
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(
      /^The server already runs 2 heavy requests \(MATOOLKIT_HEAVY_REQUESTS_TOTAL\)/,
    );
    gate.open();
    expect((await Promise.all(running)).map((r) => r.status)).toEqual([200, 200]);
  });

  it("keeps the slot of a client that went away until the server's work for it ends", async () => {
    const { gate, slots, send } = await startApp({ heavyPerCaller: 1, heavyTotal: 10 });
    const abort = new AbortController();
    const gone = send("alice", abort.signal).catch(() => "aborted");
    await gate.entered(1);
    abort.abort();
    expect(await gone).toBe("aborted");
    // The handler still runs: a new request of hers is refused rather than started beside it.
    expect((await send("alice")).status).toBe(429);
    gate.open();
    await waitFor(() => slots.inFlight("alice") === 0);
    expect((await send("alice")).status).toBe(200);
  });
});

/** Waits for a condition the server reaches after its work ends (a bounded number of turns). */
async function waitFor(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1000 && !condition(); turn++) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
}
