import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClaimOptions, IdempotencyStore } from "../../src/ports/index.ts";

export interface StoreUnderTest {
  readonly store: IdempotencyStore;
  cleanup(): Promise<void>;
}

/**
 * What every IdempotencyStore adapter must do so a redelivered worker job never runs its side
 * effect twice. Keys are fresh per case, so the store may be shared.
 */
export function describeIdempotencyStoreContract(
  adapterName: string,
  makeStore: () => Promise<StoreUnderTest>,
): void {
  describe(`IdempotencyStore contract: ${adapterName}`, () => {
    let instance: StoreUnderTest;
    let store: IdempotencyStore;
    beforeAll(async () => {
      instance = await makeStore();
      store = instance.store;
    });
    afterAll(async () => {
      await instance.cleanup();
    });

    const key = (): string => `job-${randomUUID()}`;
    const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    /** A claim remembered for `ttlSeconds` under a lease of `leaseSeconds` (both 60 unless given). */
    const as = (owner: string, seconds: { ttl?: number; lease?: number } = {}): ClaimOptions => ({
      owner,
      ttlSeconds: seconds.ttl ?? 60,
      leaseSeconds: seconds.lease ?? 60,
    });

    it("lets the first claim win and reports the key in progress to the next", async () => {
      const jobKey = key();
      expect(await store.claim(jobKey, as("worker-a"))).toEqual({ status: "claimed" });
      const second = await store.claim(jobKey, as("worker-b"));
      expect(second).toMatchObject({ status: "in_progress", owner: "worker-a" });
      expect(second.status === "in_progress" && second.claimedAt).toBeInstanceOf(Date);
      expect(second.status === "in_progress" && second.leaseExpiresAt.getTime()).toBeGreaterThan(Date.now());
    });

    it("grants exactly one of many concurrent claims", async () => {
      const jobKey = key();
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.claim(jobKey, as(`worker-${i}`))),
      );
      expect(outcomes.filter((outcome) => outcome.status === "claimed")).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome.status === "in_progress")).toHaveLength(9);
    });

    it("returns the stored value to a claim after complete", async () => {
      const jobKey = key();
      await store.claim(jobKey, as("worker-a"));
      const result = { JobId: "step-123-attempt-1", Status: "Success", Result: { complete: true } };
      await store.complete(jobKey, result, 60);
      expect(await store.claim(jobKey, as("worker-b"))).toEqual({ status: "completed", value: result });
    });

    it("makes a released key claimable again", async () => {
      const jobKey = key();
      await store.claim(jobKey, as("worker-a"));
      await store.release(jobKey);
      expect(await store.claim(jobKey, as("worker-b"))).toEqual({ status: "claimed" });
    });

    it("lets a claim take over an expired key, in progress or completed", async () => {
      const [abandoned, done] = [key(), key()];
      await store.claim(abandoned, as("worker-a", { ttl: 1, lease: 1 }));
      await store.claim(done, as("worker-a", { ttl: 1, lease: 1 }));
      await store.complete(done, { ok: true }, 1);
      await sleep(1200);
      expect(await store.claim(abandoned, as("worker-b"))).toEqual({ status: "claimed" });
      expect(await store.claim(done, as("worker-b"))).toEqual({ status: "claimed" });
    });

    it("hands a claim whose lease ran out to exactly one of many concurrent claimers, as lost", async () => {
      const jobKey = key();
      await store.claim(jobKey, as("dead-worker", { lease: 1 }));
      await sleep(1200);
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.claim(jobKey, as(`worker-${i}`))),
      );
      const lost = outcomes.filter((outcome) => outcome.status === "lost");
      expect(lost).toHaveLength(1);
      expect(lost[0]).toMatchObject({ status: "lost", previousOwner: "dead-worker" });
      expect(lost[0]?.status === "lost" && lost[0].claimedAt).toBeInstanceOf(Date);
      // The others see the taker's fresh lease, not the dead one.
      const taker = `worker-${outcomes.indexOf(lost[0]!)}`;
      for (const other of outcomes.filter((outcome) => outcome.status !== "lost")) {
        expect(other).toMatchObject({ status: "in_progress", owner: taker });
      }
    });

    it("keeps a renewed lease: the claim is not lost while its owner renews", async () => {
      const jobKey = key();
      await store.claim(jobKey, as("worker-a", { lease: 1 }));
      for (let i = 0; i < 3; i++) {
        await sleep(500);
        expect(await store.renew(jobKey, "worker-a", 1)).toBe(true);
      }
      // 1.5 s after the claim, well past its first lease of 1 s.
      expect(await store.claim(jobKey, as("worker-b"))).toMatchObject({
        status: "in_progress",
        owner: "worker-a",
      });
    });

    it("refuses a renewal by anyone but the owner, and after the claim was taken over or completed", async () => {
      const [jobKey, doneKey] = [key(), key()];
      await store.claim(jobKey, as("worker-a", { lease: 1 }));
      expect(await store.renew(jobKey, "worker-b", 60)).toBe(false);
      await sleep(1200);
      expect((await store.claim(jobKey, as("worker-b"))).status).toBe("lost");
      expect(await store.renew(jobKey, "worker-a", 60)).toBe(false);
      expect(await store.renew(jobKey, "worker-b", 60)).toBe(true);
      expect(await store.renew(key(), "worker-a", 60)).toBe(false);

      await store.claim(doneKey, as("worker-a"));
      await store.complete(doneKey, { ok: true }, 60);
      expect(await store.renew(doneKey, "worker-a", 60)).toBe(false);
    });

    it("keeps a completed key completed, whatever the lease it was claimed with", async () => {
      const jobKey = key();
      await store.claim(jobKey, as("worker-a", { lease: 1 }));
      await store.complete(jobKey, { ok: true }, 60);
      await sleep(1200);
      expect(await store.claim(jobKey, as("worker-b"))).toEqual({ status: "completed", value: { ok: true } });
    });
    // A worker claims and completes its concurrent jobs together (the embedded store sends them in
    // one statement): each key must still get exactly its own answer.
    it("answers many concurrent claims of distinct keys, each key exactly once", async () => {
      const keys = Array.from({ length: 40 }, () => key());
      const outcomes = await Promise.all(
        keys.flatMap((jobKey) => [store.claim(jobKey, as("worker-a")), store.claim(jobKey, as("worker-b"))]),
      );
      for (let i = 0; i < keys.length; i++) {
        const pair = [outcomes[2 * i], outcomes[2 * i + 1]];
        expect(pair.filter((outcome) => outcome?.status === "claimed")).toHaveLength(1);
        expect(pair.filter((outcome) => outcome?.status === "in_progress")).toHaveLength(1);
      }
    });

    it("reports every one of many concurrent takeovers of distinct keys as lost, with its previous owner", async () => {
      const keys = Array.from({ length: 20 }, () => key());
      await Promise.all(keys.map((jobKey, i) => store.claim(jobKey, as(`dead-${i}`, { lease: 1 }))));
      await sleep(1200);
      const outcomes = await Promise.all(keys.map((jobKey) => store.claim(jobKey, as("worker-b"))));
      outcomes.forEach((outcome, i) =>
        expect(outcome).toMatchObject({ status: "lost", previousOwner: `dead-${i}` }),
      );
    });

    it("records many concurrent completions, each with its own value", async () => {
      const keys = Array.from({ length: 40 }, () => key());
      await Promise.all(keys.map((jobKey) => store.claim(jobKey, as("worker-a"))));
      await Promise.all(keys.map((jobKey, i) => store.complete(jobKey, { n: i }, 60)));
      const outcomes = await Promise.all(keys.map((jobKey) => store.claim(jobKey, as("worker-b"))));
      outcomes.forEach((outcome, i) => expect(outcome).toEqual({ status: "completed", value: { n: i } }));
    });
  });
}
