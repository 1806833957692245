import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "libs/*/src/**/*.test.ts",
      "services/*/src/**/*.test.ts",
      "libs/*/test/**/*.test.ts",
      "services/*/test/**/*.test.ts",
      "scripts/**/*.test.ts",
      "drills/**/*.test.ts",
      "deploy/**/*.test.ts",
    ],
    // The suites on real Dapr run apart (`npm run test:dapr`, vitest.dapr.config.ts): once per CI
    // run, on the newest pinned daprd, not once per database flavour.
    exclude: ["**/node_modules/**", "**/*.real-dapr.test.ts"],
    // One PostgreSQL for the whole run (TEST_DATABASE_URL, testcontainers or embedded); each test
    // file clones its own database from a migrated template (see libs/testing).
    globalSetup: ["libs/testing/src/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // More test files at once than cores: a run mostly waits (timers, polling, child processes,
    // PostgreSQL), 6.6 of 14.5 minutes were CPU with vitest's default of cores - 1 files at once,
    // which is ONE on a 2-core machine. Each file has its own database, ports and data folder,
    // so files do not share state; MATOOLKIT_TEST_FILES_AT_ONCE overrides (1 to debug a flake).
    maxWorkers: Number(process.env.MATOOLKIT_TEST_FILES_AT_ONCE) || Math.max(3, availableParallelism()),
  },
});
