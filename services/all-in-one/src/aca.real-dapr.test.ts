import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topics } from "@matoolkit/domain";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { automatedLifecycleScenarios } from "../test/automated-lifecycle.scenarios.ts";
import { batchWorkflowScenarios } from "../test/batch-workflow.scenarios.ts";
import { manualBatchScenarios } from "../test/manual-batch.scenarios.ts";
import { realDaprProfile, type RealDaprRuntime } from "../test/real-dapr-profile.ts";
import { runbookLanguageScenarios } from "../test/runbook-language.scenarios.ts";
import { standardLibraryScenarios } from "../test/standard-library.scenarios.ts";
import { startAll, type RunningSystem } from "./start-all.ts";

/**
 * The aca preset (MATOOLKIT_RUNTIME=aca: Dapr pub/sub and state, the in-process workflow engine
 * resuming from SQL, timers as Service Bus scheduled messages) on REAL daprd
 * (MATOOLKIT_DAPR_VERSION, default the newest pinned), as far as it runs here. No broker here
 * delays a message (only Service Bus honours ScheduledEnqueueTimeUtc), so:
 * - with components/local the preset must refuse to run rather than fire every retry and poll
 *   check at once;
 * - the shared scenarios run the preset with the one port that needs Service Bus swapped
 *   (MATOOLKIT_TIMERS=dapr-jobs): pub/sub, state and the in-process workflow on real daprd.
 */
const version = process.env.MATOOLKIT_DAPR_VERSION ?? "newest";

describe(
  `aca preset on real daprd (${version}) with a broker that cannot delay`,
  { timeout: 120_000 },
  () => {
    let database: TestDatabase;
    let runtime: RealDaprRuntime;
    let system: RunningSystem;
    let dataDir: string;

    beforeAll(async () => {
      database = await createTestDatabase();
      dataDir = mkdtempSync(join(tmpdir(), "matoolkit-aca-refusal-"));
      runtime = await realDaprProfile({
        version,
        processEnv: process.env,
        components: "local",
        env: { MATOOLKIT_RUNTIME: "aca" },
      }).open();
      system = await startAll({
        ...(await runtime.nextStart()),
        DATABASE_URL: database.url,
        MATOOLKIT_DATA_DIR: dataDir,
        PORT: "0",
        LOG_LEVEL: "silent",
      });
    });

    afterAll(async () => {
      await system?.stop();
      await runtime?.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("never turns ready, and refuses a delayed message naming the broker, sending nothing", async () => {
      const deliverAt = new Date(Date.now() + 60_000);
      await expect(
        system.platform.bus.publish({
          id: "retry-check:step-1-retry-1",
          topic: topics.orchestratorEvents,
          properties: { MessageType: "retry-check" },
          body: { StepExecutionId: 1 },
          deliverAt,
        }),
      ).rejects.toThrow(/needs a pub\/sub that delays messages .* matoolkit-pubsub is pubsub\.redis/);
      const readyz = await fetch(`${system.apiUrl}/readyz`);
      expect(readyz.status).toBe(503);
      const copies = (await runtime.brokerMessages(topics.orchestratorEvents)) ?? [];
      expect(copies.filter((copy) => copy.cloudEvent.id === "retry-check:step-1-retry-1")).toEqual([]);
    });
  },
);

const profile = realDaprProfile({
  version,
  processEnv: process.env,
  components: "local",
  env: { MATOOLKIT_RUNTIME: "aca", MATOOLKIT_TIMERS: "dapr-jobs" },
});

manualBatchScenarios(profile);
batchWorkflowScenarios(profile);
automatedLifecycleScenarios(profile);
standardLibraryScenarios(profile);
runbookLanguageScenarios(profile);
