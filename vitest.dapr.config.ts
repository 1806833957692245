import { defineConfig } from "vitest/config";

/**
 * The suites on REAL Dapr (`npm run test:dapr`): daprd, placement and scheduler built by
 * `npm run dapr:install`, started by each test file on free ports (libs/dapr-harness), on the
 * machine's Redis server binary, RabbitMQ and PostgreSQL. MATOOLKIT_DAPR_VERSION picks the
 * pinned runtime (newest by default; `oldest` for 1.16).
 */
export default defineConfig({
  test: {
    include: [
      "libs/*/src/**/*.real-dapr.test.ts",
      "services/*/src/**/*.real-dapr.test.ts",
      "libs/*/test/**/*.real-dapr.test.ts",
      "services/*/test/**/*.real-dapr.test.ts",
      "drills/**/*.real-dapr.test.ts",
    ],
    globalSetup: ["libs/testing/src/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // One file at a time: each starts its own daprd, placement, scheduler and broker, and a whole
    // system; side by side on a 2-core machine they starve each other's timers (a workflow timer
    // was seen 56 s late with three files running at once).
    fileParallelism: false,
    // Dapr's workflow SDK narrates every work item on the console at INFO (its worker takes no
    // logger): keep the output readable; its warnings and errors still show.
    onConsoleLog: (log) => !/^\S+ (INFO|DEBUG) \[DurableTask, /.test(log),
  },
});
