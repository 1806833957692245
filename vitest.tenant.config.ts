import { defineConfig } from "vitest/config";

/**
 * `npm run test:tenant`: the standard library's contract suites against a REAL tenant, with the
 * worker's credentials from the environment (see docs/worker-and-tenant.md, "Contract suite
 * against a real tenant"). Never part of `npm test`: it needs a tenant and it writes to it.
 */
export default defineConfig({
  test: {
    include: ["services/worker/tenant-tests/**/*.tenant.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One tenant, one run at a time: parallel files would compete for its throttling budget.
    fileParallelism: false,
  },
});
