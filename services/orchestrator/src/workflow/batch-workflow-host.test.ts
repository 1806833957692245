import { insertBatch, insertPhases, listPhases, publishRunbook, transitionBatch } from "@matoolkit/db";
import { createDurableTaskWorkflowEngine, createLogger, type WorkflowEngine } from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { membersWith, runbookYaml, seedBatch } from "../../test/test-seed.ts";
import { batchInstanceId } from "./batch-workflow.ts";
import { createBatchWorkflowHost, type BatchWorkflowHost } from "./batch-workflow-host.ts";
import { progressBatch } from "./progress-batch.ts";

/**
 * Pause and resume on the workflow engine (issue 12): a paused batch's workflow is suspended (its
 * timers wait), a resumed one runs again, and the reconcile pass neither restarts nor duplicates a
 * suspended instance, including after a restart that forgot every instance (embedded engine).
 */
let database: TestDatabase;
const logger = createLogger({ level: "silent", name: "workflow-host-test" });
const running: { host: BatchWorkflowHost }[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  for (const { host } of running) await host.stop();
  await database?.drop();
});

async function startHost(): Promise<{ host: BatchWorkflowHost; engine: WorkflowEngine }> {
  const engine = createDurableTaskWorkflowEngine({ logger, idlePollMs: 10 });
  const host = createBatchWorkflowHost({
    db: database.db,
    engine,
    logger,
    recheckSeconds: 60,
    reconcileSeconds: 3600,
  });
  running.push({ host });
  await host.start();
  return { host, engine };
}

const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: echo
        worker_id: worker-01
        function: Test-Echo
`);

describe("the batch workflow host", () => {
  it("suspends a paused batch's workflow, keeps it suspended across reconciles and restarts, and resumes it", async () => {
    const batch = await seedBatch(database.db, yaml, membersWith(1));
    const instance = batchInstanceId(batch.batchId);
    const first = await startHost();
    expect(await first.engine.status(instance)).toBe("running");

    await transitionBatch(database.db, batch.batchId, "pause", { actor: "operator@contoso.test" });
    await first.host.batchChanged(batch.batchId);
    expect(await first.engine.status(instance)).toBe("suspended");
    await first.host.reconcile();
    expect(await first.engine.status(instance)).toBe("suspended");

    // A restart: the embedded engine has forgotten every instance; the start-up pass brings the
    // paused batch's workflow back suspended.
    await first.host.stop();
    const second = await startHost();
    expect(await second.engine.status(instance)).toBe("suspended");

    await transitionBatch(database.db, batch.batchId, "resume", { actor: "operator@contoso.test" });
    await second.host.batchChanged(batch.batchId);
    expect(await second.engine.status(instance)).toBe("running");
  });

  it("resumes a suspended workflow whose batch runs again when the nudge was lost", async () => {
    const batch = await seedBatch(database.db, yaml, membersWith(1));
    const instance = batchInstanceId(batch.batchId);
    const { host, engine } = await startHost();
    await transitionBatch(database.db, batch.batchId, "pause", {});
    await host.batchChanged(batch.batchId);
    expect(await engine.status(instance)).toBe("suspended");
    await transitionBatch(database.db, batch.batchId, "resume", {});
    await host.reconcile();
    expect(await engine.status(instance)).toBe("running");
  });

  it("leaves a phase that fell due while paused for the resume, which dispatches it", async () => {
    const name = `paused-automated-${process.pid}`;
    const yamlContent = yaml.replace(/^name: .*$/m, `name: ${name}`);
    const runbook = await publishRunbook(database.db, {
      name,
      yamlContent,
      overdueBehavior: "rerun",
      rerunInit: false,
    });
    const batch = await insertBatch(database.db, {
      runbookId: runbook.id,
      batchStartTime: new Date("2030-01-01T00:00:00Z"),
      isManual: false,
      createdBy: null,
    });
    await insertPhases(database.db, batch.id, [
      {
        phaseName: "migrate",
        sequence: 0,
        offsetMinutes: 0,
        dueAt: new Date("2030-01-01T00:00:00Z"),
        runbookVersion: runbook.version,
      },
    ]);
    await transitionBatch(database.db, batch.id, "activate", {});
    await transitionBatch(database.db, batch.id, "pause", {});
    const afterDue = new Date("2030-01-01T00:05:00Z");
    expect(await progressBatch(database.db, batch.id, afterDue)).toMatchObject({
      finished: false,
      status: "paused",
    });
    expect((await listPhases(database.db, batch.id)).map((phase) => phase.status)).toEqual(["pending"]);

    await transitionBatch(database.db, batch.id, "resume", {});
    await progressBatch(database.db, batch.id, afterDue);
    expect((await listPhases(database.db, batch.id)).map((phase) => phase.status)).toEqual(["dispatched"]);
  });
});
