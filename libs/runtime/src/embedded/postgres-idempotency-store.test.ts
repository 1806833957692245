import { createTestDatabase } from "@matoolkit/testing";
import { describeIdempotencyStoreContract } from "../../test/contract/idempotency-store.contract.ts";
import { createPostgresIdempotencyStore } from "./postgres-idempotency-store.ts";

describeIdempotencyStoreContract("PostgreSQL idempotency_keys", async () => {
  const database = await createTestDatabase();
  return { store: createPostgresIdempotencyStore(database.db), cleanup: () => database.drop() };
});
