import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueLocalToken } from "@matoolkit/admin-api";
import { routingProperties, topics } from "@matoolkit/domain";
import { orchestratorEventsSubscription } from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import type { OpenedRuntime, RuntimeProfile } from "./runtime-profiles.ts";
import { startAll, type RunningSystem } from "../src/start-all.ts";
import { batchStepsInRunbookOrder, eventually, exampleText } from "./test-support.ts";

/**
 * The manual-batch path end to end, through the HTTP API of the whole system in one process:
 * publish → create batch from CSV → advance init and each phase → statuses in PostgreSQL.
 */
export function manualBatchScenarios(profile: RuntimeProfile): void {
  // A whole system runs in this process (twice, for a restart), beside other test files on a
  // busy CI machine: allow more than the default 30 s per test.
  describe(`manual batch (${profile.name} runtime)`, { timeout: 120_000 }, () => {
    let database: TestDatabase;
    let runtime: OpenedRuntime;
    let system: RunningSystem;
    let dataDir: string;
    let admin: string;
    let reader: string;

    beforeAll(async () => {
      database = await createTestDatabase();
      dataDir = mkdtempSync(join(tmpdir(), "matoolkit-e2e-"));
      runtime = await profile.open();
      system = await startAll({
        ...(await runtime.nextStart()),
        DATABASE_URL: database.url,
        MATOOLKIT_DATA_DIR: dataDir,
        PORT: "0",
        LOG_LEVEL: "silent",
        MATOOLKIT_POLL_SWEEP_SECONDS: "5",
        // These scenarios run members.csv as several batches on purpose: no duplicate window.
        MATOOLKIT_DUPLICATE_BATCH_WINDOW_MINUTES: "0",
      });
      const token = (roles: Array<"Admin" | "Reader">) =>
        issueLocalToken({
          dataDir,
          issuer: "matoolkit-local",
          audience: "api://matoolkit",
          roles,
          name: `e2e-${roles.join("-") || "none"}@example.test`,
          ttlSeconds: 600,
        });
      admin = await token(["Admin"]);
      reader = await token(["Reader"]);
    });

    afterAll(async () => {
      await system?.stop();
      await runtime?.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    async function api(
      method: string,
      path: string,
      options: { token?: string; body?: string; type?: string } = {},
    ) {
      const headers: Record<string, string> = {};
      if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
      if (options.type !== undefined) headers["content-type"] = options.type;
      const response = await fetch(`${system.apiUrl}/api${path}`, { method, headers, body: options.body });
      return { status: response.status, body: (await response.json()) as any };
    }

    const batchStatus = (id: number) => api("GET", `/batches/${id}`, { token: reader }).then((r) => r.body);

    async function runBatch(csv: string): Promise<number> {
      const created = await api("POST", "/batches?runbook=contoso-pilot", {
        token: admin,
        body: csv,
        type: "text/csv",
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        isManual: true,
        status: "detected",
        memberCount: 3,
        batchStartTime: null,
      });
      const id = created.body.id as number;
      expect((await api("POST", `/batches/${id}/advance`, { token: admin })).body).toEqual({
        action: "init",
        batchId: id,
      });
      await eventually(
        () => batchStatus(id),
        (b) => b.status === "active",
        "init to finish",
      );
      for (const phase of ["pre-checks", "cutover"]) {
        const advanced = await api("POST", `/batches/${id}/advance`, { token: admin });
        expect(advanced.status).toBe(202);
        expect(advanced.body).toMatchObject({ action: "phase", phaseName: phase });
        await eventually(
          () => batchStatus(id),
          (b) => b.phases.find((p: { phaseName: string }) => p.phaseName === phase).status !== "dispatched",
          `phase ${phase} to finish`,
        );
      }
      await eventually(
        () => batchStatus(id),
        (b) => b.status === "completed" || b.status === "failed",
        "batch to end",
      );
      return id;
    }

    describe("through the admin API", () => {
      it("answers /healthz and, once the bus is up, /readyz on the API port without a token", async () => {
        expect((await fetch(`${system.apiUrl}/healthz`)).status).toBe(200);
        const ready = await eventually(
          () =>
            fetch(`${system.apiUrl}/readyz`).then(async (r) => ({ status: r.status, body: await r.json() })),
          (r) => r.status === 200,
          "the admin API to be ready",
        );
        expect(ready.body).toEqual({ status: "ready", checks: { database: "ok", messageBus: "ok" } });
      });

      it("publishes the sample runbook as version 1", async () => {
        const published = await api("POST", "/runbooks", {
          token: admin,
          body: exampleText("contoso-pilot.yaml"),
          type: "application/yaml",
        });
        expect(published.status).toBe(201);
        expect(published.body).toMatchObject({ name: "contoso-pilot", version: 1, isActive: true });
      });

      it("takes a 3-member, 2-phase, 2-step batch to completed", async () => {
        const id = await runBatch(exampleText("members.csv"));
        const { db } = database;
        const batch = await db
          .selectFrom("batches")
          .selectAll()
          .where("id", "=", id)
          .executeTakeFirstOrThrow();
        // On failure, name what did not succeed and why.
        const unsucceeded = await db
          .selectFrom("stepExecutions")
          .select(["stepName", "status", "errorCode", "errorMessage", "retryCount"])
          .where("batchId", "=", id)
          .where("status", "!=", "succeeded")
          .execute();
        expect({ status: batch.status, unsucceeded }).toEqual({ status: "completed", unsucceeded: [] });
        const phases = await db
          .selectFrom("phaseExecutions")
          .select(["phaseName", "status"])
          .where("batchId", "=", id)
          .orderBy("sequence")
          .execute();
        expect(phases).toEqual([
          { phaseName: "pre-checks", status: "completed" },
          { phaseName: "cutover", status: "completed" },
        ]);
        const steps = await db
          .selectFrom("stepExecutions")
          .select(["status", "pollCount"])
          .where("batchId", "=", id)
          .execute();
        expect(steps).toHaveLength(3 * 2 * 2);
        expect(new Set(steps.map((s) => s.status))).toEqual(new Set(["succeeded"]));
        const members = await db
          .selectFrom("batchMembers")
          .select(["status", "workerDataJson"])
          .where("batchId", "=", id)
          .execute();
        expect(members.map((m) => m.status)).toEqual(["active", "active", "active"]);
        // output_params of notify-user landed in worker_data_json and fed set-primary-email.
        expect(
          members.every(
            (m) => typeof (m.workerDataJson as Record<string, unknown>).NotifiedAddress === "string",
          ),
        ).toBe(true);
        const inits = await db
          .selectFrom("initExecutions")
          .select("status")
          .where("batchId", "=", id)
          .execute();
        expect(inits).toEqual([{ status: "succeeded" }]);
      });

      it("isolates a member whose step fails: member failed, its later steps cancelled, the others succeed", async () => {
        const id = await runBatch(exampleText("members-one-fails.csv"));
        const { db } = database;
        const members = await db
          .selectFrom("batchMembers")
          .select(["id", "memberKey", "status"])
          .where("batchId", "=", id)
          .orderBy("id")
          .execute();
        expect(members.map((m) => m.status)).toEqual(["active", "failed", "active"]);
        const failedMember = members[1]!;
        const steps = await batchStepsInRunbookOrder(db, id);
        const ofFailed = steps.filter((s) => s.batchMemberId === failedMember.id);
        expect(ofFailed.map((s) => [s.stepName, s.status])).toEqual([
          ["validate-source-mailbox", "failed"],
          ["notify-user", "cancelled"],
        ]);
        expect(ofFailed[0]?.errorMessage).toBe("source mailbox is on litigation hold");
        const ofOthers = steps.filter((s) => s.batchMemberId !== failedMember.id);
        expect(ofOthers).toHaveLength(2 * 2 * 2);
        expect(
          ofOthers
            .map((s) => `${s.phaseName}/${s.stepName}: ${s.status}`)
            .filter((s) => !s.endsWith("succeeded")),
        ).toEqual([]);
        const phases = await db
          .selectFrom("phaseExecutions")
          .select(["phaseName", "status"])
          .where("batchId", "=", id)
          .orderBy("sequence")
          .execute();
        expect(phases.map((p) => p.status)).toEqual(["completed", "completed"]);
        const batch = await db
          .selectFrom("batches")
          .select("status")
          .where("id", "=", id)
          .executeTakeFirstOrThrow();
        expect(batch.status).toBe("completed");
        // The transition timeline records the isolation.
        const memberEvents = await db
          .selectFrom("events")
          .select(["fromStatus", "toStatus"])
          .where("entity", "=", "member")
          .where("entityId", "=", failedMember.id)
          .orderBy("id")
          .execute();
        expect(memberEvents).toEqual([{ fromStatus: "active", toStatus: "failed" }]);
      });

      it("pauses a batch mid-phase: nothing is dispatched while paused, and after resume it completes", async () => {
        // A CSV of its own: the same CSV again within minutes would be refused as a double submit.
        const created = await api("POST", "/batches?runbook=contoso-pilot", {
          token: admin,
          body: exampleText("members.csv").replace("Adele Vance,", "Adele Vance (paused),"),
          type: "text/csv",
        });
        expect(created.status).toBe(201);
        const id = created.body.id as number;
        expect((await api("POST", `/batches/${id}/advance`, { token: admin })).status).toBe(202);
        await eventually(
          () => batchStatus(id),
          (b) => b.status === "active",
          "init to finish",
        );
        expect((await api("POST", `/batches/${id}/advance`, { token: admin })).status).toBe(202);
        const paused = await api("POST", `/batches/${id}/pause`, { token: admin });
        expect(paused).toEqual({ status: 200, body: { batchId: id, status: "paused" } });
        // Every dispatch commits before the pause or sees it (same process, same clock).
        const pausedAt = new Date();
        const { db } = database;
        const steps = () =>
          db
            .selectFrom("stepExecutions")
            .select(["status", "dispatchedAt"])
            .where("batchId", "=", id)
            .execute();
        // The jobs already out finish; what comes after them waits.
        const settled = await eventually(
          steps,
          (rows) => rows.every((row) => row.status !== "dispatched" && row.status !== "polling"),
          "the jobs sent before the pause to finish",
        );
        for (const row of settled) {
          if (row.dispatchedAt !== null) expect(row.dispatchedAt.getTime()).toBeLessThan(pausedAt.getTime());
        }
        expect((await batchStatus(id)).status).toBe("paused");
        expect((await api("POST", `/batches/${id}/advance`, { token: admin })).body.detail).toMatch(
          /is paused; resume it/,
        );

        const resumed = await api("POST", `/batches/${id}/resume`, { token: admin });
        expect(resumed.status).toBe(200);
        expect(resumed.body).toMatchObject({ batchId: id, status: "active" });
        await eventually(
          () => batchStatus(id),
          (b) => b.phases[0].status !== "dispatched",
          "pre-checks to finish after the resume",
        );
        expect((await api("POST", `/batches/${id}/advance`, { token: admin })).status).toBe(202);
        await eventually(
          () => batchStatus(id),
          (b) => b.status === "completed" || b.status === "failed",
          "the batch to end",
        );
        expect((await batchStatus(id)).status).toBe("completed");
        expect(new Set((await steps()).map((row) => row.status))).toEqual(new Set(["succeeded"]));
      });

      it("dead-letters a malformed message with its reason, and keeps serving", async () => {
        const { bus } = system.platform;
        const id = `malformed-${Date.now()}`;
        await bus.publish({
          id,
          topic: topics.orchestratorEvents,
          properties: { [routingProperties.messageType]: "phase-due" },
          body: { BatchId: "not-a-number", PhaseName: "cutover" },
        });
        const letters = await eventually(
          () => bus.deadLetters(orchestratorEventsSubscription),
          (rows) => rows.some((row) => row.id === id),
          "the malformed message in the dead letters",
        );
        const letter = letters.find((row) => row.id === id)!;
        // Dead-lettered on its first delivery: retrying cannot repair a malformed body.
        expect(letter.deliveryCount).toBe(1);
        expect(letter.error).toMatch(/^message\.invalid: Invalid phase-due body: BatchId invalid_type/);
        const brokerCopies = await runtime.brokerMessages(`${topics.orchestratorEvents}-deadletter`);
        if (brokerCopies !== undefined) {
          // Through Dapr: the app answered DROP, and the sidecar moved it to the dead-letter topic.
          await eventually(
            async () => (await runtime.brokerMessages(`${topics.orchestratorEvents}-deadletter`)) ?? [],
            (copies) => copies.some((copy) => copy.cloudEvent.id === id),
            "the copy in the broker's dead-letter topic",
          );
        }
        // And the system keeps serving: a whole batch still runs to completion.
        const batchId = await runBatch(exampleText("members.csv"));
        expect((await batchStatus(batchId)).status).toBe("completed");
      });

      it("rejects a runbook with three mistakes, listing all three with line:column, and stores nothing", async () => {
        const before = await database.db
          .selectFrom("runbooks")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow();
        const response = await api("POST", "/runbooks", {
          token: admin,
          body: exampleText("bad-runbook.yaml"),
          type: "application/yaml",
        });
        expect(response.status).toBe(400);
        expect(response.body.code).toBe("runbook.invalid");
        expect(
          response.body.problems.map(
            (p: { line: number; column: number; path: string }) => `${p.line}:${p.column} ${p.path}`,
          ),
        ).toEqual([
          "10:13 phases[0].offset",
          "15:15 phases[0].steps[1].name",
          "18:21 phases[0].steps[1].on_failure",
        ]);
        const after = await database.db
          .selectFrom("runbooks")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow();
        expect(after.n).toBe(before.n);
      });

      it("refuses requests without a token (401) and writes from a Reader (403), writing nothing", async () => {
        const count = () =>
          database.db
            .selectFrom("batches")
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .executeTakeFirstOrThrow()
            .then((r) => r.n);
        const before = await count();
        const anonymous = await api("POST", "/batches?runbook=contoso-pilot", {
          body: exampleText("members.csv"),
          type: "text/csv",
        });
        expect(anonymous.status).toBe(401);
        expect(anonymous.body.code).toBe("auth.unauthenticated");
        expect((await api("GET", "/batches")).status).toBe(401);
        const asReader = await api("POST", "/batches?runbook=contoso-pilot", {
          token: reader,
          body: exampleText("members.csv"),
          type: "text/csv",
        });
        expect(asReader.status).toBe(403);
        expect(asReader.body.code).toBe("auth.forbidden");
        expect(
          (
            await api("POST", "/runbooks", {
              token: reader,
              body: exampleText("contoso-pilot.yaml"),
              type: "application/yaml",
            })
          ).status,
        ).toBe(403);
        expect((await api("GET", "/batches", { token: reader })).status).toBe(200);
        expect(await count()).toBe(before);
      });

      it("rejects malformed CSV naming the line, and writes nothing", async () => {
        const count = () =>
          database.db
            .selectFrom("batchMembers")
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .executeTakeFirstOrThrow()
            .then((r) => r.n);
        const before = await count();
        const csv =
          "UserPrincipalName,PreCheck\na@contoso.test,Echo\nb@contoso.test,Echo,extra\na@contoso.test,Echo\n";
        const response = await api("POST", "/batches?runbook=contoso-pilot", {
          token: admin,
          body: csv,
          type: "text/csv",
        });
        expect(response.status).toBe(400);
        expect(response.body.detail).toMatch(/line 3/);
        const duplicate = await api("POST", "/batches?runbook=contoso-pilot", {
          token: admin,
          body: "UserPrincipalName\na@x.test\na@x.test\n",
          type: "text/csv",
        });
        expect(duplicate.status).toBe(400);
        expect(duplicate.body.problems).toEqual([
          { line: 3, message: "duplicate primary key (same as line 2)" },
        ]);
        expect(JSON.stringify(duplicate.body)).not.toContain("a@x.test");
        expect(await count()).toBe(before);
      });

      describe("members joining and leaving a running batch", () => {
        const lynne =
          "lynne.robbins@contoso.test,Lynne Robbins,lynne.robbins@fabrikam.test,smtp:lynne@contoso.test," +
          "2026-12-05T09:00:00Z,Echo";

        /** Creates a batch of members.csv and advances it through init and `upTo` phases. */
        async function batchAdvancedThrough(upTo: readonly string[]): Promise<number> {
          const created = await api("POST", "/batches?runbook=contoso-pilot", {
            token: admin,
            body: exampleText("members.csv"),
            type: "text/csv",
          });
          expect(created.status).toBe(201);
          const id = created.body.id as number;
          expect((await api("POST", `/batches/${id}/advance`, { token: admin })).status).toBe(202);
          await eventually(
            () => batchStatus(id),
            (b) => b.status === "active",
            "init to finish",
          );
          for (const phase of upTo) {
            expect((await api("POST", `/batches/${id}/advance`, { token: admin })).body).toMatchObject({
              phaseName: phase,
            });
            if (phase === upTo.at(-1)) break;
            await eventually(
              () => batchStatus(id),
              (b) =>
                b.phases.find((p: { phaseName: string }) => p.phaseName === phase).status === "completed",
              `phase ${phase} to complete`,
            );
          }
          return id;
        }

        const stepsOf = async (batchId: number, memberKey: string) =>
          (await batchStepsInRunbookOrder(database.db, batchId))
            .filter((step) => step.batchMemberId === memberIds.get(memberKey))
            .map((step) => `${step.phaseName}/${step.stepName}: ${step.status}`);
        const memberIds = new Map<string, number>();
        async function loadMemberIds(batchId: number) {
          const rows = await database.db
            .selectFrom("batchMembers")
            .select(["id", "memberKey"])
            .where("batchId", "=", batchId)
            .execute();
          for (const row of rows) memberIds.set(row.memberKey, row.id);
        }

        /** Embedded: the worker's idempotency record; Dapr: its result message at the broker. */
        async function workerRanJob(jobId: string): Promise<boolean> {
          const results = await runtime.brokerMessages(topics.workerResults);
          if (results !== undefined)
            return results.some((message) => message.cloudEvent.id === `result:${jobId}`);
          const record = await database.db
            .selectFrom("idempotencyKeys")
            .select("state")
            .where("key", "=", `worker-job:${jobId}`)
            .executeTakeFirst();
          return record?.state === "completed";
        }

        it("a member added after a phase ran catches up on it, then runs the next phase with the others", async () => {
          const id = await batchAdvancedThrough(["pre-checks"]);
          await eventually(
            () => batchStatus(id),
            (b) => b.phases[0].status === "completed",
            "pre-checks to complete",
          );
          const header = exampleText("members.csv").split("\n")[0];
          const added = await api("POST", `/batches/${id}/members`, {
            token: admin,
            body: `${header}\n${lynne}\n`,
            type: "text/csv",
          });
          expect(added.status).toBe(201);
          await loadMemberIds(id);
          // 000 "Member Catch-Up Protocol": the completed phase's steps, created and run for her alone.
          await eventually(
            () => stepsOf(id, "lynne.robbins@contoso.test"),
            (steps) => steps.length === 2 && steps.every((step) => step.endsWith("succeeded")),
            "the late member's catch-up steps",
          );
          expect((await api("POST", `/batches/${id}/advance`, { token: admin })).body).toMatchObject({
            phaseName: "cutover",
          });
          await eventually(
            () => batchStatus(id),
            (b) => b.status === "completed",
            "the batch to complete",
          );
          expect(await stepsOf(id, "lynne.robbins@contoso.test")).toEqual([
            "pre-checks/validate-source-mailbox: succeeded",
            "pre-checks/notify-user: succeeded",
            "cutover/start-mailbox-move: succeeded",
            "cutover/set-primary-email: succeeded",
          ]);
          const steps = await batchStepsInRunbookOrder(database.db, id);
          expect(steps).toHaveLength(4 * 2 * 2);
        });

        it("a member removed mid-phase has its open steps cancelled and on_member_removed run", async () => {
          const id = await batchAdvancedThrough(["pre-checks", "cutover"]);
          await loadMemberIds(id);
          const alex = memberIds.get("alex.wilber@contoso.test")!;
          // start-mailbox-move polls (Test-Poll, PendingTimes 2): a window of seconds with a step open.
          await eventually(
            () => stepsOf(id, "alex.wilber@contoso.test"),
            (steps) => steps.includes("cutover/start-mailbox-move: polling"),
            "alex's cutover step to be polling",
          );
          const removed = await api("DELETE", `/batches/${id}/members/${alex}`, { token: admin });
          expect(removed.status).toBe(200);
          expect(removed.body).toMatchObject({ memberId: alex, status: "removed", alreadyRemoved: false });
          await eventually(
            () => batchStatus(id),
            (b) => b.status === "completed",
            "the batch to complete",
          );
          // 000 "Member Removal Protocol": the orchestrator cancelled alex's open steps...
          expect(await stepsOf(id, "alex.wilber@contoso.test")).toEqual([
            "pre-checks/validate-source-mailbox: succeeded",
            "pre-checks/notify-user: succeeded",
            "cutover/start-mailbox-move: cancelled",
            "cutover/set-primary-email: cancelled",
          ]);
          // ...and sent the runbook's on_member_removed step, which the worker ran.
          await eventually(
            () => workerRanJob(`removed-member-${alex}-0`),
            (ran) => ran,
            "the on_member_removed job to run",
          );
          const statuses = await database.db
            .selectFrom("batchMembers")
            .select(["memberKey", "status"])
            .where("batchId", "=", id)
            .orderBy("id")
            .execute();
          expect(statuses.map((member) => member.status)).toEqual(["active", "removed", "active"]);
        });
      });
    });
  });
}
