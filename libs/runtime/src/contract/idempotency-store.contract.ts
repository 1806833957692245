import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IdempotencyStore } from "../ports/index.ts";

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

    it("lets the first claim win and reports the key in progress to the next", async () => {
      const jobKey = key();
      expect(await store.claim(jobKey, 60)).toEqual({ status: "claimed" });
      const second = await store.claim(jobKey, 60);
      expect(second.status).toBe("in_progress");
      expect(second.status === "in_progress" && second.claimedAt).toBeInstanceOf(Date);
    });

    it("grants exactly one of many concurrent claims", async () => {
      const jobKey = key();
      const outcomes = await Promise.all(Array.from({ length: 10 }, () => store.claim(jobKey, 60)));
      expect(outcomes.filter((outcome) => outcome.status === "claimed")).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome.status === "in_progress")).toHaveLength(9);
    });

    it("returns the stored value to a claim after complete", async () => {
      const jobKey = key();
      await store.claim(jobKey, 60);
      const result = { JobId: "step-123-attempt-1", Status: "Success", Result: { complete: true } };
      await store.complete(jobKey, result, 60);
      expect(await store.claim(jobKey, 60)).toEqual({ status: "completed", value: result });
    });

    it("makes a released key claimable again", async () => {
      const jobKey = key();
      await store.claim(jobKey, 60);
      await store.release(jobKey);
      expect(await store.claim(jobKey, 60)).toEqual({ status: "claimed" });
    });

    it("lets a claim take over an expired key, in progress or completed", async () => {
      const [abandoned, done] = [key(), key()];
      await store.claim(abandoned, 1);
      await store.claim(done, 1);
      await store.complete(done, { ok: true }, 1);
      await sleep(1200);
      expect(await store.claim(abandoned, 60)).toEqual({ status: "claimed" });
      expect(await store.claim(done, 60)).toEqual({ status: "claimed" });
    });
  });
}
