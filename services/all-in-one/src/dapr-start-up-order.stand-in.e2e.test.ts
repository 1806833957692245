import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTaskHubSidecarStandIn, type TaskHubSidecarStandIn } from "@matoolkit/runtime/testing";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { daprProfile, type OpenedRuntime } from "../test/runtime-profiles.ts";
import { startAll, type RunningSystem } from "./start-all.ts";
import { eventually, seedAutomatedBatch } from "../test/test-support.ts";

/**
 * The whole system in the dapr profile against a workflow sidecar with daprd ≤1.17's start-up
 * order (the compose file pins 1.16.9): the sidecar brings its actors up only once the app's port
 * answers, and every workflow call waits for them. A process that made a workflow call before
 * opening its app port would wait forever; this one must come up, serve batches, and do it again
 * after a restart (a new daprd, which waits for the app's port again).
 */
let workflowSidecar: TaskHubSidecarStandIn | undefined;
const profile = daprProfile("dapr, daprd 1.17 start-up order", { MATOOLKIT_RUNTIME: "dapr" }, async () => {
  // The app port is chosen per start (below), so the sidecar learns it from sidecarRestarted.
  workflowSidecar = await startTaskHubSidecarStandIn({ appPortBeforeActors: {} });
  return workflowSidecar;
});

const runbook = `
name: start-up-order
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time_column: StartsAt
init:
  - name: prepare
    worker_id: worker-01
    function: Test-Echo
    params:
      Batch: "{{_batch_id}}"
phases:
  - name: on-time
    offset: T-0
    steps:
      - name: finish
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
`;

// A whole system runs in this process, twice, beside other test files on a busy machine.
describe(
  "start-up against daprd ≤1.17 (workflow calls wait for the app's port)",
  { timeout: 120_000 },
  () => {
    let database: TestDatabase;
    let runtime: OpenedRuntime;
    let dataDir: string;
    let system: RunningSystem | undefined;

    beforeAll(async () => {
      database = await createTestDatabase();
      dataDir = mkdtempSync(join(tmpdir(), "matoolkit-start-up-order-"));
      runtime = await profile.open();
    });

    afterAll(async () => {
      await system?.stop();
      await runtime?.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    async function start(): Promise<{ system: RunningSystem; appPort: string }> {
      const env = await runtime.nextStart();
      const appPort = env.MATOOLKIT_DAPR_APP_PORT!;
      // A new daprd for this start: its actors wait for this app port.
      workflowSidecar!.sidecarRestarted(Number(appPort));
      const started = await startAll({
        ...env,
        DATABASE_URL: database.url,
        MATOOLKIT_DATA_DIR: dataDir,
        PORT: "0",
        LOG_LEVEL: "silent",
        MATOOLKIT_WORKFLOW_RECHECK_SECONDS: "30",
        MATOOLKIT_WORKFLOW_RECONCILE_SECONDS: "30",
      });
      return { system: started, appPort };
    }

    async function servesABatch(name: string): Promise<void> {
      const { db } = database;
      const batchId = await seedAutomatedBatch(db, {
        name,
        yaml: runbook.replace("name: start-up-order", `name: ${name}`),
        startsAt: new Date(Date.now() + 1_000),
        memberKeys: ["a@contoso.test", "b@contoso.test"],
      });
      await eventually(
        () =>
          db
            .selectFrom("batches")
            .select("status")
            .where("id", "=", batchId)
            .executeTakeFirstOrThrow()
            .then((b) => b.status),
        (status) => status === "completed",
        `batch ${name} to complete`,
      );
    }

    const readyz = (appPort: string) =>
      fetch(`http://127.0.0.1:${appPort}/readyz`).then((response) => response.status);

    it("comes up, reports ready and runs an automated batch through its workflow", async () => {
      const started = await start();
      system = started.system;
      await eventually(
        () => readyz(started.appPort),
        (status) => status === 200,
        "/readyz to answer 200",
      );
      await servesABatch("first-start");
    });

    it("comes up again after a restart, in front of a new sidecar that waits for the app's port", async () => {
      await system?.stop();
      system = undefined;
      await runtime.systemStopped();
      const started = await start();
      system = started.system;
      await eventually(
        () => readyz(started.appPort),
        (status) => status === 200,
        "/readyz to answer 200",
      );
      await servesABatch("after-restart");
      expect(workflowSidecar!.callsWaitingForApp).toBe(0);
    });
  },
);
