import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAll, type RunningSystem } from "@matoolkit/all-in-one";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { runCliProcess, type CliResult } from "../test/cli-process.ts";

/**
 * Issue 27's "done when": `matoolkit tenant check` against the simulated tenant names a permission
 * that was removed. The real binary, against the whole system in this process with the simulated
 * tenant started by its worker (MATOOLKIT_TENANT=simulated), as `npm start` runs it.
 */
describe("matoolkit tenant check against the simulated tenant", { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let system: RunningSystem;
  let dataDir: string;
  let scratch: string;
  let env: Record<string, string>;
  let simulatorUrl: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), "matoolkit-tenant-check-data-"));
    scratch = mkdtempSync(join(tmpdir(), "matoolkit-tenant-check-"));
    system = await startAll({
      DATABASE_URL: database.url,
      MATOOLKIT_DATA_DIR: dataDir,
      PORT: "0",
      LOG_LEVEL: "silent",
      MATOOLKIT_TENANT: "simulated",
      MATOOLKIT_SIMULATED_TENANT_SEED: "examples/fabrikam-tenant.json",
    });
    simulatorUrl = /at (http:\/\/[^\s)]+)/u.exec(system.tenantDescription)![1]!;
    env = {
      PATH: process.env.PATH ?? "",
      HOME: join(scratch, "home"),
      MATOOLKIT_CONFIG: join(scratch, "config", "config.json"),
      MATOOLKIT_API_URL: `${system.apiUrl}/api`,
      MATOOLKIT_DATA_DIR: dataDir,
    };
    expect((await cli("runbook", "publish", "examples/contoso-to-fabrikam.yaml")).code).toBe(0);
  });

  afterAll(async () => {
    await system?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  const cli = (...args: string[]): Promise<CliResult> => runCliProcess(args, env);
  const simulatorApp = async (settings: Record<string, unknown>) => {
    const response = await fetch(`${simulatorUrl}/_simulator/app`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(settings),
    });
    expect(response.status).toBe(200);
  };
  const allGranted = {
    graphPermissions: [
      "User.ReadWrite.All",
      "User.Invite.All",
      "User-ConvertToInternal.ReadWrite.All",
      "GroupMember.ReadWrite.All",
      "Application.Read.All",
      "Policy.Read.All",
      "Domain.Read.All",
    ],
    exchangeManageAsApp: true,
    exchangeRole: "Exchange Administrator",
    allowInvitesFrom: "everyone",
  };
  const lineOf = (stdout: string, check: string) =>
    stdout.split("\n").find((line) => line.startsWith(`${check} `));

  it("passes when the app has what the runbook needs", async () => {
    await simulatorApp(allGranted);
    const result = await cli("tenant", "check", "--runbook", "contoso-to-fabrikam");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Runbook: contoso-to-fabrikam v1$/m);
    for (const check of [
      "graph.token",
      "graph.permissions",
      "exchange.permission",
      "exchange.token",
      "exchange.role",
      "b2b.invitation_policy",
    ]) {
      expect(lineOf(result.stdout, check)).toMatch(/\bPASSED\b/u);
    }
    // Every address param of this runbook comes from member data: said, not guessed.
    expect(lineOf(result.stdout, "domains.undetermined")).toMatch(
      /SKIPPED.*cutover\/set-final-upn NewUserPrincipalName/u,
    );
    expect(result.stdout).toMatch(/^Passed\.$/m);
  });

  it("names a Graph permission that was removed, and exits 1", async () => {
    await simulatorApp({
      ...allGranted,
      graphPermissions: allGranted.graphPermissions.filter((name) => name !== "GroupMember.ReadWrite.All"),
    });
    const result = await cli("tenant", "check", "--runbook", "contoso-to-fabrikam");
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, "graph.permissions")).toMatch(
      /^graph\.permissions\s+FAILED\s+GroupMember\.ReadWrite\.All\s+Missing Microsoft Graph application permission: GroupMember\.ReadWrite\.All \(to add and remove group members, to read group memberships; needed by Remove-EntraGroupMember, Test-EntraGroupMembership\)/u,
    );
    expect(result.stdout).toMatch(/^FAILED: fix the failed lines/m);

    const json = JSON.parse(
      (await cli("--json", "tenant", "check", "--runbook", "contoso-to-fabrikam")).stdout,
    );
    expect(json.passed).toBe(false);
    expect(json.lines.find((line: { check: string }) => line.check === "graph.permissions").missing).toEqual([
      "GroupMember.ReadWrite.All",
    ]);
  });

  it("names the Exchange role when the app has none, and the blocked invitation policy", async () => {
    await simulatorApp({ ...allGranted, exchangeRole: null, allowInvitesFrom: "none" });
    const result = await cli("tenant", "check", "--runbook", "contoso-to-fabrikam");
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, "exchange.token")).toMatch(/PASSED/u);
    expect(lineOf(result.stdout, "exchange.role")).toMatch(
      /^exchange\.role\s+FAILED\s+Exchange Administrator\s+Exchange Online refused Get-OrganizationConfig \(exchange\.unauthorized/u,
    );
    expect(lineOf(result.stdout, "b2b.invitation_policy")).toMatch(/FAILED.*allowInvitesFrom is none/u);
  });

  it("names a literal target domain that is not verified in the tenant", async () => {
    await simulatorApp({ ...allGranted, unverifiedDomains: ["fabrikam-new.example"] });
    const yaml = [
      "name: rename-wave",
      "data_source:",
      "  type: csv",
      "  path: contoso-to-fabrikam.csv",
      "  primary_key: SourceEmail",
      "  batch_time_column: MigrationDate",
      "phases:",
      "  - name: cutover",
      "    offset: T-0",
      "    steps:",
      "      - name: set-upn",
      "        worker_id: worker-01",
      "        function: Set-EntraUserUPN",
      "        params:",
      '          UserId: "{{StagingUPN}}"',
      '          NewUserPrincipalName: "{{Alias}}@fabrikam-new.example"',
      "",
    ].join("\n");
    const file = join(scratch, "rename-wave.yaml");
    writeFileSync(file, yaml);
    const published = await cli("runbook", "publish", file);
    expect(published.stderr).toBe("");
    const result = await cli("tenant", "check", "--runbook", "rename-wave");
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, "domains.verified")).toMatch(
      /^domains\.verified\s+FAILED\s+fabrikam-new\.example\s+Not a verified domain of the tenant: fabrikam-new\.example \(cutover\/set-upn NewUserPrincipalName\)/u,
    );
    // Only what the runbook calls: no Exchange lines for a Graph-only runbook.
    expect(lineOf(result.stdout, "exchange.role")).toBeUndefined();
  });

  it("without a runbook, checks every standard function's permissions", async () => {
    await simulatorApp({ ...allGranted, graphPermissions: ["User.ReadWrite.All", "Application.Read.All"] });
    const json = JSON.parse((await cli("--json", "tenant", "check")).stdout);
    expect(json.runbook).toBeNull();
    expect(json.functions).toHaveLength(14);
    // User.ReadWrite.All also covers invitations and conversion (their higher-privileged permission).
    expect(json.lines.find((line: { check: string }) => line.check === "graph.permissions").missing).toEqual([
      "GroupMember.ReadWrite.All",
    ]);
  });
});
