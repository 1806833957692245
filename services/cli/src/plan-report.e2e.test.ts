import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAll, type RunningSystem } from "@matoolkit/all-in-one";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { runCliInProcess, runCliProcess, type CliResult } from "../test/cli-process.ts";

/**
 * `runbook plan` and `batch report` (issue 12) against the embedded system, as cli.e2e.test.ts
 * runs the other commands: the real binary for output and exit codes, in-process for the rest.
 */
describe("matoolkit runbook plan and batch report", { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let system: RunningSystem;
  let dataDir: string;
  let scratch: string;
  let env: Record<string, string>;
  let operator: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), "matoolkit-plan-e2e-data-"));
    scratch = mkdtempSync(join(tmpdir(), "matoolkit-plan-e2e-"));
    system = await startAll({
      DATABASE_URL: database.url,
      MATOOLKIT_DATA_DIR: dataDir,
      PORT: "0",
      LOG_LEVEL: "silent",
    });
    env = {
      PATH: process.env.PATH ?? "",
      HOME: join(scratch, "home"),
      MATOOLKIT_CONFIG: join(scratch, "config", "config.json"),
      MATOOLKIT_API_URL: `${system.apiUrl}/api`,
      MATOOLKIT_DATA_DIR: dataDir,
    };
    operator = { ...env, MATOOLKIT_CLI_ROLE: "Operator" };
    expectOk(await runCliInProcess(["runbook", "publish", "examples/contoso-pilot.yaml"], env));
  });

  afterAll(async () => {
    await system?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  function expectOk(result: CliResult): void {
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  }

  describe("runbook plan", () => {
    it("prints a member CSV's plan as a table: one line per init step and member step", async () => {
      const result = await runCliProcess(
        ["runbook", "plan", "contoso-pilot", "--csv", "examples/members.csv", "--limit", "2"],
        operator,
      );
      expectOk(result);
      const lines = result.stdout.trimEnd().split("\n");
      expect(lines.slice(0, 3)).toEqual([
        "Runbook:    contoso-pilot version 1",
        "Members:    3 in the CSV, 2 listed",
        // The example uses no {{_batch_start_time}}, so a manual batch misses nothing ("-": none).
        "Unresolved: 0 step(s) would fail with template.unresolved (3 members checked)",
      ]);
      const table = lines.slice(4).map((line) => line.trim().split(/\s{2,}/));
      expect(table[0]).toEqual(["MEMBER", "PHASE", "DUE", "STEP", "FUNCTION", "UNRESOLVED"]);
      expect(table.slice(1)).toEqual([
        ["(init)", "init", "manual", "create-batch-group", "Test-Echo", "-"],
        ["adele.vance@contoso.test", "pre-checks", "manual", "validate-source-mailbox", "Test-Echo", "-"],
        ["adele.vance@contoso.test", "pre-checks", "manual", "notify-user", "Test-Echo", "-"],
        ["adele.vance@contoso.test", "cutover", "manual", "start-mailbox-move", "Test-Poll", "-"],
        ["adele.vance@contoso.test", "cutover", "manual", "set-primary-email", "Test-Echo", "-"],
        ["alex.wilber@contoso.test", "pre-checks", "manual", "validate-source-mailbox", "Test-Echo", "-"],
        ["alex.wilber@contoso.test", "pre-checks", "manual", "notify-user", "Test-Echo", "-"],
        ["alex.wilber@contoso.test", "cutover", "manual", "start-mailbox-move", "Test-Poll", "-"],
        ["alex.wilber@contoso.test", "cutover", "manual", "set-primary-email", "Test-Echo", "-"],
      ]);
    });

    it("plans the data source's rows with --source, dated from their batch time; --json is the API's answer", async () => {
      const result = await runCliInProcess(
        ["--json", "runbook", "plan", "contoso-pilot", "--source"],
        operator,
      );
      expectOk(result);
      const plan = JSON.parse(result.stdout);
      expect(plan).toMatchObject({
        input: "source",
        memberCount: 3,
        checkedMemberCount: 3,
        unresolvedCount: 0,
      });
      expect(plan.batches).toHaveLength(1);
      expect(plan.batches[0].batchStartTime).toBe("2026-12-05T09:00:00.000Z");
      const setPrimary = plan.batches[0].members[0].phases[1].steps[1];
      expect(setPrimary).toMatchObject({
        step: "set-primary-email",
        params: { EmailAddresses: ["smtp:adele@contoso.test", "smtp:av@contoso.test"] },
        resolvedAtRunTime: ["NotifiedAddress"],
      });
      expect(plan.batches[0].members[0].phases[0].dueAt).toBe("2026-11-30T09:00:00.000Z");
    });

    it("exits 2 without --csv or --source, or with both; exits 1 with the API's problem for a bad CSV", async () => {
      const neither = await runCliInProcess(["runbook", "plan", "contoso-pilot"], operator);
      expect(neither.code).toBe(2);
      expect(neither.stderr).toContain("--csv <file>, or --source");
      const both = await runCliInProcess(
        ["runbook", "plan", "contoso-pilot", "--source", "--csv", "examples/members.csv"],
        operator,
      );
      expect(both.code).toBe(2);
      const bad = await runCliInProcess(
        ["runbook", "plan", "contoso-pilot", "--csv", "examples/contoso-pilot.yaml"],
        operator,
      );
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/member_data\.invalid/);
      const reader = await runCliInProcess(["runbook", "plan", "contoso-pilot", "--source"], {
        ...env,
        MATOOLKIT_CLI_ROLE: "Reader",
      });
      expect(reader.code).toBe(1);
      expect(reader.stderr).toMatch(/auth\.forbidden/);
    });
  });

  describe("batch report", () => {
    it("streams the CSV to stdout or into a file, and exits 1 for a batch that does not exist", async () => {
      const created = await runCliInProcess(
        ["--json", "batch", "create", "contoso-pilot", "examples/members.csv"],
        env,
      );
      expectOk(created);
      const batchId = JSON.parse(created.stdout).id as number;

      const printed = await runCliProcess(["batch", "report", String(batchId)], env);
      expectOk(printed);
      const lines = printed.stdout.split("\r\n");
      expect(lines.pop()).toBe("");
      expect(lines).toHaveLength(4);
      expect(lines[0]?.split(",").slice(0, 6)).toEqual([
        "member id",
        "member key",
        "member status",
        "pre-checks/validate-source-mailbox status",
        "pre-checks/validate-source-mailbox error",
        "pre-checks/validate-source-mailbox finished",
      ]);
      expect(lines[1]).toMatch(/^\d+,adele\.vance@contoso\.test,active,/);

      const file = join(scratch, "report.csv");
      const written = await runCliInProcess(["batch", "report", String(batchId), "-o", file], env);
      expect(written.code).toBe(0);
      expect(written.stderr).toBe(`Wrote ${file}\n`);
      expect(readFileSync(file, "utf8")).toBe(printed.stdout);

      const missing = await runCliInProcess(["batch", "report", "999999"], env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/resource\.not_found.*batch 999999 does not exist/);
    });
  });
});
