import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@matoolkit/db";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import type { OpenedRuntime, RuntimeProfile } from "./runtime-profiles.ts";
import { startAll, type RunningSystem } from "../src/start-all.ts";
import { eventually, seedAutomatedBatch } from "./test-support.ts";

/**
 * Batch progression as a durable workflow, on the whole system: an automated batch runs its init
 * and then each phase when it falls due, with no operator; and stopping the system in the middle
 * of a phase loses nothing: the next start resumes every batch from SQL alone.
 */
export function batchWorkflowScenarios(profile: RuntimeProfile): void {
  // A whole system runs in this process (twice, for a restart), beside other test files on a
  // busy CI machine: allow more than the default 30 s per test.
  describe(`batch workflow (${profile.name} runtime)`, { timeout: 120_000 }, () => {
    let database: TestDatabase;
    let runtime: OpenedRuntime;
    let dataDir: string;

    beforeAll(async () => {
      database = await createTestDatabase();
      dataDir = mkdtempSync(join(tmpdir(), "matoolkit-workflow-"));
      runtime = await profile.open();
    });

    afterAll(async () => {
      await runtime?.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    async function start(): Promise<RunningSystem> {
      const system = await startAll({
        ...(await runtime.nextStart()),
        DATABASE_URL: database.url,
        MATOOLKIT_DATA_DIR: dataDir,
        PORT: "0",
        LOG_LEVEL: "silent",
        MATOOLKIT_WORKFLOW_RECHECK_SECONDS: "30",
        MATOOLKIT_WORKFLOW_RECONCILE_SECONDS: "30",
      });
      return {
        ...system,
        stop: async () => {
          await system.stop();
          await runtime.systemStopped();
        },
      };
    }

    const runbook = (name: string, stepFunction: string) => `
name: ${name}
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time_column: StartsAt
init:
  - name: create-group
    worker_id: worker-01
    function: Test-Echo
    params:
      Batch: "{{_batch_id}}"
phases:
  - name: early
    offset: T-1d
    steps:
      - name: work
        worker_id: worker-01
        function: ${stepFunction}
        params:
          Seconds: 1
          Upn: "{{Upn}}"
  - name: on-time
    offset: T-0
    steps:
      - name: finish
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
`;

    function seed(db: Db, name: string, startsAt: Date, stepFunction: string): Promise<number> {
      return seedAutomatedBatch(db, {
        name,
        yaml: runbook(name, stepFunction),
        startsAt,
        memberKeys: ["a@contoso.test", "b@contoso.test", "c@contoso.test"],
      });
    }

    const phasesOf = (db: Db, batchId: number) =>
      db
        .selectFrom("phaseExecutions")
        .select(["phaseName", "status", "dueAt", "dispatchedAt"])
        .where("batchId", "=", batchId)
        .orderBy("sequence")
        .execute();
    const batchStatus = (db: Db, batchId: number) =>
      db
        .selectFrom("batches")
        .select("status")
        .where("id", "=", batchId)
        .executeTakeFirstOrThrow()
        .then((b) => b.status);

    describe("by itself", () => {
      it("runs an automated batch by itself: init, the overdue phase at once, the next one when it falls due", async () => {
        const system = await start();
        try {
          const { db } = database;
          const startsAt = new Date(Date.now() + 4_000);
          const batchId = await seed(db, "automated-on-time", startsAt, "Test-Echo");
          await eventually(
            () => batchStatus(db, batchId),
            (s) => s === "completed",
            "the batch to complete",
          );
          const [early, onTime] = await phasesOf(db, batchId);
          expect(early?.status).toBe("completed");
          expect(onTime?.status).toBe("completed");
          // Not before its due time, and promptly after it (a durable timer, not a 5-minute poll).
          const lagMs = onTime!.dispatchedAt!.getTime() - onTime!.dueAt!.getTime();
          expect(lagMs).toBeGreaterThanOrEqual(0);
          expect(lagMs).toBeLessThan(2_000);
          const inits = await db
            .selectFrom("initExecutions")
            .select("status")
            .where("batchId", "=", batchId)
            .execute();
          expect(inits).toEqual([{ status: "succeeded" }]);
        } finally {
          await system.stop();
        }
      });

      it("survives a restart in the middle of a phase: nothing lost, nothing stuck, nothing run twice", async () => {
        const { db } = database;
        const first = await start();
        const startsAt = new Date(Date.now() + 8_000);
        let batchId: number;
        try {
          batchId = await seed(db, "restarted", startsAt, "Test-Sleep");
          // Stop while the first phase's steps are running (each sleeps 1 s).
          await eventually(
            () => db.selectFrom("stepExecutions").select("status").where("batchId", "=", batchId).execute(),
            (steps) => steps.some((s) => s.status === "dispatched"),
            "a step in flight",
          );
        } finally {
          await first.stop();
        }
        const second = await start();
        try {
          await eventually(
            () => batchStatus(db, batchId),
            (s) => s === "completed",
            "the batch to complete after restart",
          );
          const steps = await db
            .selectFrom("stepExecutions")
            .select(["id", "status", "retryCount", "pollCount"])
            .where("batchId", "=", batchId)
            .execute();
          expect(steps).toHaveLength(3 * 2);
          expect(steps.every((s) => s.status === "succeeded" && s.retryCount === 0)).toBe(true);
          // Exactly one dispatch and one success per step in the timeline: no double transition.
          const events = await db
            .selectFrom("events")
            .select(["entityId", "toStatus"])
            .where("batchId", "=", batchId)
            .where("entity", "=", "step")
            .orderBy("id")
            .execute();
          for (const step of steps) {
            const mine = events.filter((e) => e.entityId === step.id).map((e) => e.toStatus);
            expect(mine).toEqual(["dispatched", "succeeded"]);
          }
          // The second phase was dispatched by the restarted workflow, on time.
          const [, onTime] = await phasesOf(db, batchId);
          expect(onTime!.dispatchedAt!.getTime()).toBeGreaterThanOrEqual(onTime!.dueAt!.getTime());
        } finally {
          await second.stop();
        }
      });
    });
  });
}
