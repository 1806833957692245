import { afterEach, describe, expect, it } from "vitest";
import {
  createStandInBroker,
  startStandInSidecar,
  type StandInBroker,
  type StandInSidecar,
} from "./index.ts";

const STORE = "matoolkit-state";
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function newSidecar(broker: StandInBroker, appId = "matoolkit-orchestrator"): Promise<StandInSidecar> {
  const sidecar = await startStandInSidecar({ broker, appId, log: () => undefined });
  cleanups.push(() => sidecar.stop());
  await sidecar.ready();
  return sidecar;
}

function newBroker(options: Parameters<typeof createStandInBroker>[0] = {}): StandInBroker {
  const broker = createStandInBroker(options);
  cleanups.push(() => broker.close());
  return broker;
}

function save(sidecar: StandInSidecar, items: unknown[]): Promise<Response> {
  return fetch(`${sidecar.url}/v1.0/state/${STORE}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(items),
  });
}

const getState = (sidecar: StandInSidecar, key: string) =>
  fetch(`${sidecar.url}/v1.0/state/${STORE}/${encodeURIComponent(key)}`);

describe("state API", () => {
  it("returns the saved value with an ETag, and 204 for a key that was never saved", async () => {
    const sidecar = await newSidecar(newBroker());
    expect((await save(sidecar, [{ key: "idem-1", value: { status: "in_progress" } }])).status).toBe(204);

    const found = await getState(sidecar, "idem-1");
    expect(found.status).toBe(200);
    expect(found.headers.get("etag")).toMatch(/.+/);
    expect(await found.json()).toEqual({ status: "in_progress" });

    const missing = await getState(sidecar, "never-saved");
    expect(missing.status).toBe(204);
    expect(await missing.text()).toBe("");
  });

  it("answers a bulk get with one item per key, in order: data and ETag, or the key alone when absent", async () => {
    const broker = newBroker();
    const sidecar = await newSidecar(broker);
    const other = await newSidecar(broker, "another-app");
    await save(sidecar, [
      { key: "a", value: { n: 1 } },
      { key: "b", value: "two", metadata: { ttlInSeconds: "60" } },
    ]);
    await save(other, [{ key: "c", value: "not yours" }]);

    const response = await fetch(`${sidecar.url}/v1.0/state/${STORE}/bulk`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ keys: ["b", "missing", "a", "c"], parallelism: 10 }),
    });
    expect(response.status).toBe(200);
    const etagOfA = (await getState(sidecar, "a")).headers.get("etag");
    expect(await response.json()).toEqual([
      { key: "b", data: "two", etag: expect.any(String), metadata: { ttlExpireTime: expect.any(String) } },
      { key: "missing" },
      { key: "a", data: { n: 1 }, etag: etagOfA },
      { key: "c" },
    ]);
  });

  it("rejects a first-write without ETag on an existing key with 500 ERR_STATE_SAVE by default (Redis/PostgreSQL) or 409 when configured", async () => {
    const redisLike = await newSidecar(newBroker());
    const claim = [{ key: "claim", value: 1, options: { concurrency: "first-write" } }];
    expect((await save(redisLike, claim)).status).toBe(204);
    const second = await save(redisLike, claim);
    expect(second.status).toBe(500);
    expect(await second.json()).toMatchObject({ errorCode: "ERR_STATE_SAVE" });
    expect(await (await getState(redisLike, "claim")).json()).toBe(1);

    const cosmosLike = await newSidecar(newBroker({ stateFirstWriteConflictStatus: 409 }));
    expect((await save(cosmosLike, claim)).status).toBe(204);
    expect((await save(cosmosLike, claim)).status).toBe(409);
  });

  describe("state.redis's first-write mark (the default store)", () => {
    const claim = (key: string, value: unknown, etag?: string) => ({
      key,
      value,
      ...(etag === undefined ? {} : { etag }),
      options: { concurrency: "first-write" },
    });
    const lastWrite = (key: string, value: unknown, etag?: string) => ({
      key,
      value,
      ...(etag === undefined ? {} : { etag }),
      options: { concurrency: "last-write" },
    });
    const etagOf = async (sidecar: StandInSidecar, key: string) =>
      (await getState(sidecar, key)).headers.get("etag") ?? "";

    it("refuses a later save without the ETag of a key saved with first-write, last-write included (500 ERR_STATE_SAVE), and takes it with the ETag", async () => {
      const sidecar = await newSidecar(newBroker());
      expect((await save(sidecar, [claim("claimed", "v1")])).status).toBe(204);

      const withoutEtag = await save(sidecar, [lastWrite("claimed", "v2")]);
      expect(withoutEtag.status).toBe(500);
      expect(await withoutEtag.json()).toMatchObject({ errorCode: "ERR_STATE_SAVE" });
      expect((await save(sidecar, [{ key: "claimed", value: "v2" }])).status).toBe(500);
      expect(await (await getState(sidecar, "claimed")).json()).toBe("v1");

      // With the right ETag (first-write or unspecified concurrency): accepted.
      expect((await save(sidecar, [claim("claimed", "v2", await etagOf(sidecar, "claimed"))])).status).toBe(
        204,
      );
      expect(
        (await save(sidecar, [{ key: "claimed", value: "v3", etag: await etagOf(sidecar, "claimed") }]))
          .status,
      ).toBe(204);
      expect(await (await getState(sidecar, "claimed")).json()).toBe("v3");

      // The mark stays: still refused without the ETag. last-write drops the ETag it carries
      // (parseETag), so it cannot overwrite a marked key even with the right one: an ETag mismatch.
      expect((await save(sidecar, [lastWrite("claimed", "v4")])).status).toBe(500);
      expect(
        (await save(sidecar, [lastWrite("claimed", "v4", await etagOf(sidecar, "claimed"))])).status,
      ).toBe(409);

      // Deleting the key clears the mark.
      expect((await fetch(`${sidecar.url}/v1.0/state/${STORE}/claimed`, { method: "DELETE" })).status).toBe(
        204,
      );
      expect((await save(sidecar, [lastWrite("claimed", "v5")])).status).toBe(204);
      expect((await save(sidecar, [lastWrite("claimed", "v6")])).status).toBe(204);
    });

    it("lets a first-write without ETag overwrite a key that carries no mark, and marks it", async () => {
      const sidecar = await newSidecar(newBroker());
      expect((await save(sidecar, [lastWrite("k", "a")])).status).toBe(204);
      expect((await save(sidecar, [claim("k", "b")])).status).toBe(204);
      expect(await (await getState(sidecar, "k")).json()).toBe("b");
      expect((await save(sidecar, [lastWrite("k", "c")])).status).toBe(500);
    });

    it("honours the mark in a transaction, where a first-write does not set it", async () => {
      const sidecar = await newSidecar(newBroker());
      const transaction = (operations: unknown[]) =>
        fetch(`${sidecar.url}/v1.0/state/${STORE}/transaction`, {
          method: "POST",
          body: JSON.stringify({ operations }),
        });
      await save(sidecar, [claim("marked", 1)]);
      expect((await transaction([{ operation: "upsert", request: lastWrite("marked", 2) }])).status).toBe(
        500,
      );

      expect((await transaction([{ operation: "upsert", request: claim("unmarked", 1) }])).status).toBe(204);
      expect((await save(sidecar, [lastWrite("unmarked", 2)])).status).toBe(204);
    });

    it("does not exist on the other stores: postgresql-v2 lets a last-write without ETag overwrite a first-write", async () => {
      const sidecar = await newSidecar(newBroker({ stateStoreKind: "postgresql-v2" }));
      expect((await save(sidecar, [claim("k", 1)])).status).toBe(204);
      expect((await save(sidecar, [lastWrite("k", 2)])).status).toBe(204);
      expect(await (await getState(sidecar, "k")).json()).toBe(2);
    });
  });

  it("answers 409 when a save or delete carries an ETag that no longer matches", async () => {
    const sidecar = await newSidecar(newBroker());
    await save(sidecar, [{ key: "k", value: "v1" }]);
    const etag = (await getState(sidecar, "k")).headers.get("etag") ?? "";
    expect(
      (await save(sidecar, [{ key: "k", value: "v2", etag, options: { concurrency: "first-write" } }]))
        .status,
    ).toBe(204);

    const stale = await save(sidecar, [{ key: "k", value: "v3", etag }]);
    expect(stale.status).toBe(409);
    expect(await stale.json()).toMatchObject({ errorCode: "ERR_STATE_SAVE" });

    const staleDelete = await fetch(`${sidecar.url}/v1.0/state/${STORE}/k`, {
      method: "DELETE",
      headers: { "if-match": etag },
    });
    expect(staleDelete.status).toBe(409);
    expect(await (await getState(sidecar, "k")).json()).toBe("v2");

    const current = (await getState(sidecar, "k")).headers.get("etag") ?? "";
    expect(
      (
        await fetch(`${sidecar.url}/v1.0/state/${STORE}/k`, {
          method: "DELETE",
          headers: { "if-match": current },
        })
      ).status,
    ).toBe(204);
    expect((await getState(sidecar, "k")).status).toBe(204);
  });

  it("expires a key after ttlInSeconds, after which first-write can claim it again", async () => {
    const broker = newBroker();
    const sidecar = await newSidecar(broker);
    await save(sidecar, [
      { key: "short", value: "x", metadata: { ttlInSeconds: "1" }, options: { concurrency: "first-write" } },
    ]);
    const fresh = await getState(sidecar, "short");
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("metadata.ttlExpireTime")).toMatch(/Z$/);

    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await getState(sidecar, "short")).status).toBe(204);
    expect(
      (await save(sidecar, [{ key: "short", value: "y", options: { concurrency: "first-write" } }])).status,
    ).toBe(204);
  });

  describe("a key past its TTL, per imitated store (stateStoreKind)", () => {
    /** A clock the test moves: no waiting, no timing. */
    function clockedBroker(kind: "redis" | "postgresql-v2" | "dynamodb") {
      let now = Date.parse("2026-01-01T00:00:00Z");
      const broker = newBroker({ stateStoreKind: kind, stateClock: () => new Date(now) });
      return { broker, advanceSeconds: (seconds: number) => void (now += seconds * 1000) };
    }
    const firstWrite = (key: string, value: unknown, ttl?: number) => ({
      key,
      value,
      options: { concurrency: "first-write" },
      ...(ttl === undefined ? {} : { metadata: { ttlInSeconds: String(ttl) } }),
    });

    it("redis (default): the key is gone, a first-write claims it again", async () => {
      const { broker, advanceSeconds } = clockedBroker("redis");
      const sidecar = await newSidecar(broker);
      expect((await save(sidecar, [firstWrite("k", "x", 10)])).status).toBe(204);
      advanceSeconds(11);
      expect((await getState(sidecar, "k")).status).toBe(204);
      expect((await save(sidecar, [firstWrite("k", "y")])).status).toBe(204);
    });

    it("dynamodb: hidden from reads, yet a first-write fails with a plain 500 until the sweep", async () => {
      const { broker, advanceSeconds } = clockedBroker("dynamodb");
      const sidecar = await newSidecar(broker);
      expect((await save(sidecar, [firstWrite("k", "x", 10)])).status).toBe(204);
      const etag = (await getState(sidecar, "k")).headers.get("etag")!;
      advanceSeconds(11);

      expect((await getState(sidecar, "k")).status).toBe(204);
      expect(broker.stateEntries(STORE).size).toBe(0);
      const blocked = await save(sidecar, [firstWrite("k", "y")]);
      expect(blocked.status).toBe(500);
      expect(((await blocked.json()) as { errorCode: string }).errorCode).toBe("ERR_STATE_SAVE");
      // Still blocked later: nothing but the sweep removes it.
      advanceSeconds(3600);
      expect((await save(sidecar, [firstWrite("k", "y")])).status).toBe(500);

      broker.sweepExpiredState();
      expect((await save(sidecar, [firstWrite("k", "y")])).status).toBe(204);
      expect(await (await getState(sidecar, "k")).json()).toBe("y");
      // The old ETag matched only the swept item.
      expect((await save(sidecar, [{ key: "k", value: "z", etag }])).status).toBe(409);
    });

    it("dynamodb: a write whose ETag matches the hidden item succeeds", async () => {
      const { broker, advanceSeconds } = clockedBroker("dynamodb");
      const sidecar = await newSidecar(broker);
      await save(sidecar, [firstWrite("k", "x", 10)]);
      const etag = (await getState(sidecar, "k")).headers.get("etag")!;
      advanceSeconds(11);
      const replaced = await save(sidecar, [
        { key: "k", value: "y", etag, options: { concurrency: "first-write" } },
      ]);
      expect(replaced.status).toBe(204);
      expect(await (await getState(sidecar, "k")).json()).toBe("y");
    });

    it("postgresql-v2: hidden from reads, a first-write upserts over it, an ETag write does not match it", async () => {
      const { broker, advanceSeconds } = clockedBroker("postgresql-v2");
      const sidecar = await newSidecar(broker);
      await save(sidecar, [firstWrite("k", "x", 10), firstWrite("j", "x", 10)]);
      const etag = (await getState(sidecar, "k")).headers.get("etag")!;
      advanceSeconds(11);

      expect((await getState(sidecar, "k")).status).toBe(204);
      expect((await save(sidecar, [{ key: "k", value: "y", etag }])).status).toBe(409);
      expect((await save(sidecar, [firstWrite("j", "y")])).status).toBe(204);
      expect(await (await getState(sidecar, "j")).json()).toBe("y");
    });
  });

  it("prefixes keys with the app id so two apps sharing a store never see each other's keys", async () => {
    const broker = newBroker();
    const orchestrator = await newSidecar(broker, "matoolkit-orchestrator");
    const worker = await newSidecar(broker, "matoolkit-worker");
    await save(orchestrator, [{ key: "shared-name", value: "orchestrator" }]);

    expect((await getState(worker, "shared-name")).status).toBe(204);
    expect([...broker.stateEntries(STORE).keys()]).toEqual(["matoolkit-orchestrator||shared-name"]);
    const illegal = await save(worker, [{ key: "a||b", value: 1 }]);
    expect(illegal.status).toBe(400);
  });

  it("applies a transaction all or nothing", async () => {
    const sidecar = await newSidecar(newBroker());
    await save(sidecar, [{ key: "a", value: 1 }]);
    const transaction = (operations: unknown[]) =>
      fetch(`${sidecar.url}/v1.0/state/${STORE}/transaction`, {
        method: "POST",
        body: JSON.stringify({ operations }),
      });

    const failing = await transaction([
      { operation: "upsert", request: { key: "b", value: 2 } },
      { operation: "upsert", request: { key: "a", value: 3, etag: "not-the-etag" } },
    ]);
    // daprd answers a failed transaction with 500, an ETag mismatch included.
    expect(failing.status).toBe(500);
    expect(await failing.json()).toMatchObject({ errorCode: "ERR_STATE_TRANSACTION" });
    expect((await getState(sidecar, "b")).status).toBe(204);

    expect(
      (
        await transaction([
          { operation: "upsert", request: { key: "b", value: 2 } },
          { operation: "delete", request: { key: "a" } },
        ])
      ).status,
    ).toBe(204);
    expect(await (await getState(sidecar, "b")).json()).toBe(2);
    expect((await getState(sidecar, "a")).status).toBe(204);
  });

  it("answers 400 ERR_STATE_STORE_NOT_FOUND for a store the sidecar does not have", async () => {
    const sidecar = await newSidecar(newBroker());
    const response = await fetch(`${sidecar.url}/v1.0/state/other-store/k`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ errorCode: "ERR_STATE_STORE_NOT_FOUND" });
  });
});
