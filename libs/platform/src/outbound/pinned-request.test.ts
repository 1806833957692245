import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllowedDestinations } from "./allowed-destinations.ts";
import { OutboundRequestError } from "./outbound-errors.ts";
import { checkDestination, outboundPolicy, type Resolver } from "./outbound-policy.ts";
import { parseOutboundUrl } from "./outbound-url.ts";
import { pinnedLookup, sendPinnedRequest, type PinnedRequest } from "./pinned-request.ts";

/** Real sockets on loopback only: a listener on 127.0.0.1, and 127.0.0.2 where nothing listens. */
let server: Server;
let port: number;
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(`${req.headers.host} ${req.url}`);
    if (req.url === "/redirect") res.writeHead(302, { location: "/target" }).end();
    else if (req.url === "/slow") setTimeout(() => res.writeHead(204).end(), 2_000);
    else if (req.url === "/big") res.writeHead(200).end("x".repeat(5_000_000));
    else res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const post = (timeoutMs = 2_000): PinnedRequest => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: "{}",
  timeoutMs,
  signal: new AbortController().signal,
});

const answers =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: 4 as const }));

async function failure(promise: Promise<unknown>): Promise<OutboundRequestError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OutboundRequestError);
  return error as OutboundRequestError;
}

describe("sendPinnedRequest", () => {
  it("gives up at once when stopped before it began, and the resolution failing later is no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", record);
    try {
      const stopping = new AbortController();
      stopping.abort(new Error("notifier stopped"));
      let failResolution: (error: Error) => void = () => undefined;
      const resolving = new Promise<never>((_, reject) => (failResolution = reject));
      const policy = outboundPolicy({ resolve: () => resolving });
      const attempt = sendPinnedRequest("https://hooks.example.test/hook", policy, {
        ...post(),
        signal: stopping.signal,
      });
      await expect(attempt).rejects.toThrow("notifier stopped");
      failResolution(Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" }));
      // Node reports an unhandled rejection after the microtasks of the turn it happened in.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", record);
    }
  });

  it("refuses a host resolving to loopback without connecting", async () => {
    const before = hits.length;
    const policy = outboundPolicy({ resolve: answers("127.0.0.1") });
    const error = await failure(sendPinnedRequest(`http://sneaky.example:${port}/x`, policy, post()));
    expect(error.kind).toBe("refused_address");
    expect(error.message).toBe("address 127.0.0.1 (of sneaky.example) is loopback, not allowed");
    expect(hits.length).toBe(before);
  });

  it("reaches a loopback receiver the allow-list names, with the host name as Host", async () => {
    const policy = outboundPolicy({
      resolve: answers("127.0.0.1"),
      allowed: parseAllowedDestinations(["hooks.test"]),
    });
    const answer = await sendPinnedRequest(`http://hooks.test:${port}/hook`, policy, post());
    expect(answer.status).toBe(204);
    expect(hits.at(-1)).toBe(`hooks.test:${port} /hook`);
  });

  it("returns a redirect as it is and follows nothing", async () => {
    const policy = outboundPolicy({ allowed: parseAllowedDestinations(["127.0.0.1"]) });
    const answer = await sendPinnedRequest(`http://127.0.0.1:${port}/redirect`, policy, post());
    expect(answer.status).toBe(302);
    expect(hits).not.toContain(`127.0.0.1:${port} /target`);
  });

  it("connects to the checked address only: a rebinding resolver cannot swap it", async () => {
    let calls = 0;
    // Allowed address first (nothing listens on 127.0.0.2), the receiver's address after.
    const rebinding: Resolver = async () => [
      { address: calls++ === 0 ? "127.0.0.2" : "127.0.0.1", family: 4 },
    ];
    const policy = outboundPolicy({ resolve: rebinding, allowed: parseAllowedDestinations(["127.0.0.2"]) });
    const before = hits.length;
    const error = await failure(sendPinnedRequest(`http://rebind.test:${port}/rebind`, policy, post()));
    expect(error.kind).toBe("connect_failed");
    expect(error.code).toBe("ECONNREFUSED");
    expect(calls).toBe(1);
    expect(hits.length).toBe(before);
  });

  it("gives up at the deadline", async () => {
    const policy = outboundPolicy({ allowed: parseAllowedDestinations(["127.0.0.1"]) });
    const error = await failure(sendPinnedRequest(`http://127.0.0.1:${port}/slow`, policy, post(200)));
    expect(error.kind).toBe("timeout");
  });

  it("reads no body: a large answer costs nothing", async () => {
    const policy = outboundPolicy({ allowed: parseAllowedDestinations(["127.0.0.1"]) });
    const answer = await sendPinnedRequest(`http://127.0.0.1:${port}/big`, policy, post());
    expect(answer.status).toBe(200);
  });
});

describe("pinnedLookup", () => {
  it("answers the checked public address to every lookup, however the name resolves later (no socket opened)", async () => {
    let calls = 0;
    const rebinding: Resolver = async () => [
      { address: calls++ === 0 ? "93.184.215.14" : "127.0.0.1", family: 4 },
    ];
    const destination = await checkDestination(
      parseOutboundUrl("http://rebind.test/"),
      outboundPolicy({ resolve: rebinding }),
    );
    const lookup = pinnedLookup(destination);
    const asked = (all: boolean) =>
      new Promise<unknown>((resolve, reject) =>
        lookup("rebind.test", { all }, (error, address) => (error ? reject(error) : resolve(address))),
      );
    expect(await asked(true)).toEqual([{ address: "93.184.215.14", family: 4 }]);
    expect(await asked(false)).toBe("93.184.215.14");
    expect(calls).toBe(1);
  });
});
