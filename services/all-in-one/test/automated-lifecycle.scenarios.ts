import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueLocalToken } from "@matoolkit/admin-api";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import type { OpenedRuntime, RuntimeProfile } from "./runtime-profiles.ts";
import { startAll, type RunningSystem } from "../src/start-all.ts";
import { eventually } from "./test-support.ts";

/**
 * The automated lifecycle on the whole system, from a csv source: publish, switch automation on,
 * rows become a batch that runs by itself; a row added later joins (catch-up), a row removed
 * leaves (member-removed).
 */
export function automatedLifecycleScenarios(profile: RuntimeProfile): void {
  // A whole system runs in this process (twice, for a restart), beside other test files on a
  // busy CI machine: allow more than the default 30 s per test.
  describe(`automated lifecycle (${profile.name} runtime)`, { timeout: 120_000 }, () => {
    let database: TestDatabase;
    let runtime: OpenedRuntime;
    let dir: string;
    let system: RunningSystem;
    let admin: string;

    // csv sources read only below MATOOLKIT_CSV_DIR, which may not hold the data dir.
    const csvPath = () => join(dir, "sources", "members.csv");
    const startsAt = new Date(Date.now() + 60 * 60_000).toISOString();
    function writeMembers(keys: string[]): void {
      writeFileSync(
        csvPath(),
        ["Upn,StartsAt", ...keys.map((key) => `${key},${startsAt}`)].join("\n") + "\n",
      );
    }

    beforeAll(async () => {
      database = await createTestDatabase();
      dir = mkdtempSync(join(tmpdir(), "matoolkit-automated-"));
      mkdirSync(join(dir, "sources"));
      writeMembers(["a@contoso.test", "b@contoso.test"]);
      runtime = await profile.open();
      system = await startAll({
        ...(await runtime.nextStart()),
        DATABASE_URL: database.url,
        MATOOLKIT_DATA_DIR: join(dir, "data"),
        MATOOLKIT_CSV_DIR: join(dir, "sources"),
        PORT: "0",
        LOG_LEVEL: "silent",
        MATOOLKIT_SCHEDULER_TICK_SECONDS: "5",
      });
      admin = await issueLocalToken({
        dataDir: join(dir, "data"),
        issuer: "matoolkit-local",
        audience: "api://matoolkit",
        roles: ["Admin"],
        name: "automation@example.test",
        ttlSeconds: 600,
      });
    });

    afterAll(async () => {
      await system?.stop();
      await runtime?.close();
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    async function api(method: string, path: string, body?: string, type?: string) {
      const headers: Record<string, string> = { authorization: `Bearer ${admin}` };
      if (type !== undefined) headers["content-type"] = type;
      const response = await fetch(`${system.apiUrl}/api${path}`, { method, headers, body });
      return { status: response.status, body: (await response.json()) as any };
    }

    const membersOf = () =>
      database.db.selectFrom("batchMembers").select(["memberKey", "status"]).orderBy("memberKey").execute();

    it("creates a batch from the source, runs its overdue phase, then adds and removes members as rows change", async () => {
      const yaml = `name: automated-csv
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time_column: StartsAt
phases:
  - name: prepare
    offset: T-5d
    steps:
      - name: echo
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
  - name: cutover
    offset: T-0
    steps:
      - name: echo
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
`;
      expect((await api("POST", "/runbooks", yaml, "application/yaml")).status).toBe(201);
      // Automation is off until switched on (000 default): no batch yet.
      expect(
        (
          await api(
            "PUT",
            "/runbooks/automated-csv/automation",
            JSON.stringify({ enabled: true }),
            "application/json",
          )
        ).status,
      ).toBe(200);

      const [batch] = await eventually(
        () => database.db.selectFrom("batches").select(["id", "status", "isManual"]).execute(),
        (rows) => rows.length === 1,
        "the scheduler to create the batch",
      );
      expect(batch?.isManual).toBe(false);
      // prepare (T-5d) is overdue at once; cutover (T-0) is an hour away.
      await eventually(
        () =>
          database.db
            .selectFrom("phaseExecutions")
            .select(["phaseName", "status"])
            .orderBy("sequence")
            .execute(),
        (phases) => phases[0]?.status === "completed" && phases[1]?.status === "pending",
        "the overdue phase to run",
      );

      writeMembers(["a@contoso.test", "c@contoso.test"]);
      const members = await eventually(
        membersOf,
        (rows) =>
          rows.length === 3 && rows.some((m) => m.memberKey === "b@contoso.test" && m.status === "removed"),
        "c to join and b to leave",
      );
      expect(members).toEqual([
        { memberKey: "a@contoso.test", status: "active" },
        { memberKey: "b@contoso.test", status: "removed" },
        { memberKey: "c@contoso.test", status: "active" },
      ]);
      // The late joiner caught up on the phase that had already run.
      const caughtUp = await eventually(
        () =>
          database.db
            .selectFrom("stepExecutions")
            .innerJoin("batchMembers", "batchMembers.id", "stepExecutions.batchMemberId")
            .select("stepExecutions.status")
            .where("batchMembers.memberKey", "=", "c@contoso.test")
            .execute(),
        (steps) => steps.length === 1 && steps[0]?.status === "succeeded",
        "c's catch-up step",
      );
      expect(caughtUp).toEqual([{ status: "succeeded" }]);
    });
  });
}
