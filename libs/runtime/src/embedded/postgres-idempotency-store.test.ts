import { createTestDatabase } from "@matoolkit/testing";
import { describe, expect, it } from "vitest";
import { describeIdempotencyStoreContract } from "../../test/contract/idempotency-store.contract.ts";
import { createPostgresIdempotencyStore } from "./postgres-idempotency-store.ts";

describeIdempotencyStoreContract("PostgreSQL idempotency_keys", async () => {
  const database = await createTestDatabase();
  return { store: createPostgresIdempotencyStore(database.db), cleanup: () => database.drop() };
});

describe("PostgreSQL idempotency_keys: completions recorded together", () => {
  it("refuses only the completion whose value PostgreSQL cannot store; the others in its group are recorded", async () => {
    const database = await createTestDatabase();
    try {
      const store = createPostgresIdempotencyStore(database.db);
      const options = { owner: "worker-a", ttlSeconds: 60, leaseSeconds: 60 };
      const keys = Array.from({ length: 12 }, (_, i) => `worker-job:step-${i}`);
      await Promise.all(keys.map((key) => store.claim(key, options)));
      // jsonb has no \u0000: a function result quoting a NUL byte is refused by the server.
      const outcomes = await Promise.allSettled(
        keys.map((key, i) => store.complete(key, i === 5 ? { text: "a\u0000b" } : { n: i }, 60)),
      );
      expect(outcomes.map((outcome) => outcome.status)).toEqual(
        keys.map((_, i) => (i === 5 ? "rejected" : "fulfilled")),
      );
      const after = await Promise.all(keys.map((key) => store.claim(key, { ...options, owner: "worker-b" })));
      after.forEach((outcome, i) =>
        expect(outcome).toEqual(
          i === 5
            ? expect.objectContaining({ status: "in_progress" })
            : { status: "completed", value: { n: i } },
        ),
      );
    } finally {
      await database.drop();
    }
  });
});
