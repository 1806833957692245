import { randomUUID } from "node:crypto";
import { openRealSidecar } from "@matoolkit/dapr-harness";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeIdempotencyStoreContract } from "../../test/contract/idempotency-store.contract.ts";
import { createDaprHttp, type DaprHttp } from "./dapr-http.ts";
import { createDaprIdempotencyStore } from "./dapr-idempotency-store.ts";
import { createDaprStateStore } from "./dapr-state-store.ts";

/**
 * The idempotency store on REAL daprd (MATOOLKIT_DAPR_VERSION, default the newest pinned) with
 * components/local's Redis state store on a redis-server of the test's own: the contract every
 * adapter meets, on components-contrib's state.redis rather than the stand-in's reading of it.
 */
const version = process.env.MATOOLKIT_DAPR_VERSION ?? "newest";

describeIdempotencyStoreContract(`Dapr state store on real daprd (${version}), Redis`, async () => {
  const fixture = await openRealSidecar({ version, env: process.env });
  const http = createDaprHttp({ httpEndpoint: fixture.httpEndpoint });
  return {
    store: createDaprIdempotencyStore(createDaprStateStore(http, "matoolkit-state")),
    cleanup: () => fixture.close(),
  };
});

describe(`Dapr idempotency store's sidecar calls on real daprd (${version})`, { timeout: 120_000 }, () => {
  let fixture: Awaited<ReturnType<typeof openRealSidecar>>;
  let http: DaprHttp;
  const calls: string[] = [];
  beforeAll(async () => {
    fixture = await openRealSidecar({ version, env: process.env });
    const plain = createDaprHttp({ httpEndpoint: fixture.httpEndpoint });
    http = {
      ...plain,
      request: (request) => {
        calls.push(request.operation);
        return plain.request(request);
      },
    };
  });
  afterAll(async () => {
    await fixture?.close();
  });
  const options = { owner: "worker-a", ttlSeconds: 600, leaseSeconds: 60 };

  it("claims in one call and records the outcome in one more; a copy's claim reads it back", async () => {
    const store = createDaprIdempotencyStore(createDaprStateStore(http, "matoolkit-state"));
    const key = `worker-job:${randomUUID()}`;
    calls.length = 0;
    expect(await store.claim(key, options)).toEqual({ status: "claimed" });
    await store.complete(key, { Status: "Succeeded" }, 600);
    expect(calls).toEqual(["state.save", "state.save"]);
    expect(await store.claim(key, { ...options, owner: "worker-b" })).toEqual({
      status: "completed",
      value: { Status: "Succeeded" },
    });
    expect(await store.renew(key, "worker-a", 60)).toBe(false);
  });

  it("keeps the last of two completions, and forgets both records on release", async () => {
    const store = createDaprIdempotencyStore(createDaprStateStore(http, "matoolkit-state"));
    const key = `worker-job:${randomUUID()}`;
    await store.claim(key, options);
    await store.complete(key, { attempt: 1 }, 600);
    await store.complete(key, { attempt: 2 }, 600);
    expect(await store.claim(key, options)).toEqual({ status: "completed", value: { attempt: 2 } });
    await store.release(key);
    expect(await store.claim(key, options)).toEqual({ status: "claimed" });
  });

  it("reads an outcome written into the claim's own key (before the done key existed) as completed", async () => {
    const state = createDaprStateStore(http, "matoolkit-state");
    const key = `worker-job:${randomUUID()}`;
    expect(await state.create(key, { status: "completed", value: { old: true } }, 600)).toBe(true);
    const store = createDaprIdempotencyStore(state);
    expect(await store.claim(key, options)).toEqual({ status: "completed", value: { old: true } });
  });
});
