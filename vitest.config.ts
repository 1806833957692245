import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "libs/*/src/**/*.test.ts",
      "services/*/src/**/*.test.ts",
      "scripts/**/*.test.ts",
      "drills/**/*.test.ts",
      "deploy/**/*.test.ts",
    ],
    // One PostgreSQL for the whole run (TEST_DATABASE_URL, testcontainers or embedded); each test
    // file clones its own database from a migrated template (see libs/testing).
    globalSetup: ["libs/testing/src/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
