import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createStandInBroker, startStandInSidecar, type StandInBroker } from "@matoolkit/dapr-stand-in";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
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

async function openStore(broker: StandInBroker): Promise<DaprStateStore> {
  const sidecar = await startStandInSidecar({ broker, appId: "state-app", log: () => undefined });
  cleanups.push(() => sidecar.stop());
  await sidecar.ready();
  return createDaprStateStore(createDaprHttp({ httpEndpoint: sidecar.url }), "matoolkit-state");
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
