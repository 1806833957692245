import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createStandInBroker, startStandInSidecar, type StandInBroker } from "@matoolkit/dapr-stand-in";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createLogger } from "../logger.ts";
import { createDaprHttp } from "./dapr-http.ts";
import { createDaprStateStore, type DaprStateStore } from "./dapr-state-store.ts";

/**
 * First-write claims against a stand-in that retries plain store errors the way daprd does under
 * the shipped resiliency policy (issue 14, finding 7).
 */
interface RetryPolicy {
  policy: string;
  duration?: string;
  maxRetries: number;
}
const resiliency = parse(
  readFileSync(resolve(import.meta.dirname, "../../../../dapr/resources/resiliency.yaml"), "utf8"),
) as {
  spec: {
    policies: { retries: Record<string, RetryPolicy> };
    targets: { components: Record<string, { outbound?: { retry?: string } }> };
  };
};
const stateRetryName = resiliency.spec.targets.components["matoolkit-state"]?.outbound?.retry;
const stateRetry =
  stateRetryName === undefined ? undefined : resiliency.spec.policies.retries[stateRetryName];
const shippedRetries = stateRetry?.maxRetries ?? 0;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type StoreOptions = Parameters<typeof createDaprStateStore>[2];

async function openSidecar(broker: StandInBroker) {
  const sidecar = await startStandInSidecar({ broker, appId: "state-app", log: () => undefined });
  cleanups.push(() => sidecar.stop());
  await sidecar.ready();
  return sidecar;
}

async function openStore(broker: StandInBroker, options?: StoreOptions): Promise<DaprStateStore> {
  const sidecar = await openSidecar(broker);
  return createDaprStateStore(createDaprHttp({ httpEndpoint: sidecar.url }), "matoolkit-state", options);
}

function newBroker(): StandInBroker {
  const broker = createStandInBroker({ stateSaveRetries: shippedRetries });
  cleanups.push(() => broker.close());
  return broker;
}

describe("Dapr state store first-write under the shipped resiliency policy", () => {
  it("recognises a first write that committed but whose answer timed out as won", async () => {
    const broker = newBroker();
    const store = await openStore(broker);
    broker.timeOutNextStateSave("claim-timeout");

    expect(await store.create("claim-timeout", { holder: "me" }, 60)).toBe(true);
    expect((await store.get("claim-timeout"))?.value).toEqual({ holder: "me" });
    // A second claimer still loses.
    expect(await store.create("claim-timeout", { holder: "other" }, 60)).toBe(false);
  });

  it("recognises a conditional replace that committed but timed out as won", async () => {
    const broker = newBroker();
    const store = await openStore(broker);
    expect(await store.create("lease", { n: 1 }, 60)).toBe(true);
    const { etag } = (await store.get("lease"))!;
    broker.timeOutNextStateSave("lease");

    expect(await store.replace("lease", { n: 2 }, etag, 60)).toBe(true);
    expect((await store.get("lease"))?.value).toEqual({ n: 2 });
  });

  it("decides a lost first-write race with at most two quick Dapr retries", async () => {
    // Redis, PostgreSQL v2 and DynamoDB report the lost race as a plain error, which daprd
    // retries under the policy: every retry delays the loser.
    expect(shippedRetries).toBeLessThanOrEqual(2);
    expect(stateRetry?.policy).toBe("constant");
    expect(stateRetry?.duration).toMatch(/^\d+ms$/);
    expect(Number.parseInt(stateRetry?.duration ?? "", 10) * shippedRetries).toBeLessThanOrEqual(500);

    const broker = newBroker();
    const store = await openStore(broker);
    expect(await store.create("raced", { holder: "a" }, 60)).toBe(true);
    expect(await store.create("raced", { holder: "b" }, 60)).toBe(false);
    expect(broker.stateSaveExecutions("raced")).toBe(1 + 1 + shippedRetries);
  });
});

/**
 * DynamoDB (issue 14, finding 2): an item past its TTL is hidden from reads but stays until
 * DynamoDB sweeps it (hours to days), and a first-write on it fails with a plain 500. The stand-in
 * imitates that (`stateStoreKind: "dynamodb"`, never swept here); one clock, moved by the test,
 * drives both the stand-in's TTLs and the adapter's logical expiry.
 */
describe("Dapr state store logical expiry against a DynamoDB-like store", () => {
  function dynamoBroker() {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const broker = createStandInBroker({
      stateSaveRetries: shippedRetries,
      stateStoreKind: "dynamodb",
      stateClock: () => new Date(now),
    });
    cleanups.push(() => broker.close());
    return { broker, now: () => now, advanceSeconds: (seconds: number) => void (now += seconds * 1000) };
  }

  it("creates again a key whose holder died once it expired, and only one of two concurrent creators wins", async () => {
    const { broker, now, advanceSeconds } = dynamoBroker();
    const dead = await openStore(broker, { now });
    expect(await dead.create("claim", { holder: "dead" }, 30)).toBe(true);
    advanceSeconds(31);

    // Two replicas race for the expired key.
    const [a, b] = [await openStore(broker, { now }), await openStore(broker, { now })];
    const outcomes = await Promise.all([
      a.create("claim", { holder: "a" }, 30),
      b.create("claim", { holder: "b" }, 30),
    ]);
    expect(outcomes.filter((won) => won)).toHaveLength(1);
    expect((await a.get("claim"))?.value).toEqual({ holder: outcomes[0] ? "a" : "b" });
  });

  it("still refuses a live key: no takeover before it expired", async () => {
    const { broker, now, advanceSeconds } = dynamoBroker();
    const store = await openStore(broker, { now });
    expect(await store.create("live", { holder: "first" }, 60)).toBe(true);
    advanceSeconds(59);
    expect(await store.create("live", { holder: "second" }, 60)).toBe(false);
    expect((await store.get("live"))?.value).toEqual({ holder: "first" });
  });

  it("reads an expired key as absent while Dapr keeps it for the physical grace, to be taken over", async () => {
    const { broker, now, advanceSeconds } = dynamoBroker();
    const sidecar = await openSidecar(broker);
    const store = createDaprStateStore(createDaprHttp({ httpEndpoint: sidecar.url }), "matoolkit-state", {
      now,
    });
    const createdAt = now();
    expect(await store.create("expiring", { n: 1 }, 30)).toBe(true);
    advanceSeconds(31);

    expect(await store.get("expiring")).toBeUndefined();
    const raw = await fetch(`${sidecar.url}/v1.0/state/matoolkit-state/expiring`);
    expect(raw.status).toBe(200);
    const sevenDays = 7 * 24 * 3600 * 1000;
    expect(Date.parse(raw.headers.get("metadata.ttlExpireTime")!)).toBeGreaterThanOrEqual(
      createdAt + 30_000 + sevenDays,
    );
  });

  it("reports a key hidden past the physical grace as lost, warning once with state.key_blocked", async () => {
    const { broker, now, advanceSeconds } = dynamoBroker();
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      level: "warn",
      name: "state-test",
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const store = await openStore(broker, { now, logger, physicalGraceSeconds: 0 });
    expect(await store.create("timer|poll|lease", { since: "then" }, 10)).toBe(true);
    advanceSeconds(11);

    // DynamoDB hides the item and refuses the first write; nothing conditional can reach it.
    expect(await store.create("timer|poll|lease", { since: "now" }, 10)).toBe(false);
    expect(await store.create("timer|poll|lease", { since: "now" }, 10)).toBe(false);
    const blocked = lines.filter((line) => line.reason === "state.key_blocked");
    expect(blocked).toEqual([expect.objectContaining({ key: "timer|poll|lease", level: 40 })]);

    broker.sweepExpiredState();
    expect(await store.create("timer|poll|lease", { since: "later" }, 10)).toBe(true);
  });
});
