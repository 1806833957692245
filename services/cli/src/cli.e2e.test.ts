import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOrCreateLocalSigningKey } from "@matoolkit/auth";
import { startAll, type RunningSystem } from "@matoolkit/all-in-one";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { runCli } from "./run.ts";
import { repoRoot, runCliInProcess, runCliProcess, startCli, type CliResult } from "../test/cli-process.ts";

/**
 * The real `matoolkit` binary, run as a child process against the whole system (admin API,
 * orchestrator, worker, scheduler) started in this process on a test database: every command
 * once, the human and the --json output, exit codes, and the configuration sources.
 */
describe("matoolkit CLI against the embedded system", { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let system: RunningSystem;
  let dataDir: string;
  let scratch: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), "matoolkit-cli-e2e-data-"));
    scratch = mkdtempSync(join(tmpdir(), "matoolkit-cli-e2e-"));
    system = await startAll({
      DATABASE_URL: database.url,
      MATOOLKIT_DATA_DIR: dataDir,
      PORT: "0",
      LOG_LEVEL: "silent",
      MATOOLKIT_POLL_SWEEP_SECONDS: "5",
      // The webhook test's receiver address is loopback: allowed as an operator would allow an
      // internal receiver (issue 25), not a bypass of the outbound policy.
      MATOOLKIT_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
    });
    env = {
      PATH: process.env.PATH ?? "",
      HOME: join(scratch, "home"),
      MATOOLKIT_CONFIG: join(scratch, "config", "config.json"),
      MATOOLKIT_API_URL: `${system.apiUrl}/api`,
      MATOOLKIT_DATA_DIR: dataDir,
    };
  });

  afterAll(async () => {
    await system?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => runCliProcess(args, env);
  const cliWith = (extra: Record<string, string>, ...args: string[]) =>
    runCliProcess(args, { ...env, ...extra });

  /** Runs a command that must succeed and returns its parsed --json output. */
  async function json(...args: string[]): Promise<any> {
    const result = await cli("--json", ...args);
    expectOk(result);
    return JSON.parse(result.stdout);
  }

  function expectOk(result: CliResult): void {
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  }

  /** The CLI in this process with the given fetch (runCliInProcess uses the global one). */
  async function runCliWithFetch(args: string[], fetchFn: typeof fetch): Promise<CliResult> {
    let stdout = "";
    let stderr = "";
    const code = await runCli(args, {
      env,
      cwd: repoRoot,
      home: env.HOME ?? repoRoot,
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      fetch: fetchFn,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      now: () => new Date(),
    });
    return { code, stdout, stderr };
  }

  /** Polls `matoolkit --json <args>` (in this process: one child per poll would be slow) until `done`. */
  async function until(args: string[], done: (value: any) => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const result = await runCliInProcess(["--json", ...args], env);
      expect(result.stderr).toBe("");
      const value = JSON.parse(result.stdout);
      if (done(value)) return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${result.stdout}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** A port nothing listens on (not port 1: fetch refuses the "bad ports" list outright). */
  async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  describe("runbooks", () => {
    it("publishes a runbook file and reads it back as tables, fields and JSON", async () => {
      const published = await cli("runbook", "publish", "examples/contoso-pilot.yaml");
      expectOk(published);
      expect(published.stdout).toMatch(/^Published contoso-pilot version 1 \(id \d+\)\.$/m);
      expect(await json("runbook", "publish", "examples/contoso-pilot.yaml")).toMatchObject({
        name: "contoso-pilot",
        version: 2,
        isActive: true,
      });

      const list = await cli("runbook", "list");
      expectOk(list);
      const [header, row, ...rest] = list.stdout.trimEnd().split("\n");
      expect(header).toMatch(/^NAME\s+VERSION\s+ACTIVE\s+OVERDUE\s+RERUN INIT\s+CREATED\s+LAST ERROR$/);
      expect(row).toMatch(/^contoso-pilot\s+2\s+yes\s+rerun\s+no\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+-$/);
      expect(rest).toEqual([]);

      const shown = await cli("runbook", "get", "contoso-pilot");
      expectOk(shown);
      expect(shown.stdout).toMatch(/^Version: +2$/m);
      expect(shown.stdout).toContain(readFileSync("examples/contoso-pilot.yaml", "utf8"));
      expect(await json("runbook", "get", "contoso-pilot", "--version", "1")).toMatchObject({
        version: 1,
        isActive: false,
      });

      const versions = await cli("runbook", "versions", "contoso-pilot");
      expectOk(versions);
      expect(versions.stdout.trimEnd().split("\n").slice(1)).toEqual([
        expect.stringMatching(/^\s*2\s+yes\s+rerun\s/),
        expect.stringMatching(/^\s*1\s+no\s+rerun\s/),
      ]);
    });

    it("prints every problem of an invalid runbook on its own line and exits 1", async () => {
      const refused = await cli("runbook", "publish", "examples/bad-runbook.yaml");
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe("");
      const [first, ...problems] = refused.stderr.trimEnd().split("\n");
      expect(first).toMatch(/^error runbook\.invalid: Runbook has 3 problem\(s\)/);
      expect(problems).toHaveLength(3);
      expect(problems[0]).toMatch(/^ {2}10:13 phases\[0\]\.offset invalid offset "T\+5d"/);
      for (const line of problems) expect(line).toMatch(/^ {2}\d+:\d+ \S+ \S/);
    });
  });

  describe("automation, query preview and template", () => {
    it("shows, enables and disables automation, recording who switched it", async () => {
      const status = await cli("automation", "status", "contoso-pilot");
      expectOk(status);
      expect(status.stdout).toMatch(/^Automation: +disabled$/m);
      expect(await json("automation", "enable", "contoso-pilot")).toMatchObject({
        automationEnabled: true,
        enabledBy: "local-admin",
      });
      const disabled = await cli("automation", "disable", "contoso-pilot");
      expectOk(disabled);
      expect(disabled.stdout).toMatch(/^Automation: +disabled$/m);
      expect(disabled.stdout).toMatch(/^Disabled: +\S+Z by local-admin$/m);
    });

    it("previews the runbook's query with a limit", async () => {
      const preview = await cli("query", "preview", "contoso-pilot", "--limit", "2");
      expectOk(preview);
      expect(preview.stdout).toMatch(/^Rows read: +2 \(limit 2\)$/m);
      expect(preview.stdout).toMatch(/^2026-12-05T09:00:00.000Z\s+2\s+new\s+-$/m);
      expect(preview.stdout).toContain("adele.vance@contoso.test");
    });

    it("downloads the CSV template to stdout or to a file", async () => {
      const template = await cli("template", "download", "contoso-pilot");
      expectOk(template);
      const header = template.stdout.split(/\r?\n/)[0]?.split(",");
      expect(header).toEqual(expect.arrayContaining(["UserPrincipalName", "MigrationDate", "TargetEmail"]));
      const file = join(scratch, "template.csv");
      const written = await cli("template", "download", "contoso-pilot", "-o", file);
      expect(written.code).toBe(0);
      expect(written.stderr).toBe(`Wrote ${file}\n`);
      expect(readFileSync(file, "utf8")).toBe(template.stdout);
    });
  });

  describe("a manual batch", () => {
    let batchId: number;

    it("is created from a CSV, advanced to the end and watched until it completes", async () => {
      const created = await json("batch", "create", "contoso-pilot", "examples/members.csv");
      expect(created).toMatchObject({ isManual: true, status: "detected", memberCount: 3 });
      batchId = created.id;

      const watch = startCli(["batch", "watch", String(batchId), "--interval", "0.2"], env);
      // Advance only once the watch has shown the batch as created, so its output is deterministic.
      for (const deadline = Date.now() + 30_000; !watch.stdout().includes("waiting for");) {
        if (Date.now() > deadline) throw new Error(`watch printed nothing: ${watch.stdout()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const advanced = await cli("batch", "advance", String(batchId));
      expectOk(advanced);
      expect(advanced.stdout).toBe(`Batch ${batchId}: init steps dispatched.\n`);
      await until(["batch", "get", String(batchId)], (b) => b.status === "active", "init to finish");
      expect(await json("batch", "advance", String(batchId))).toMatchObject({
        action: "phase",
        phaseName: "pre-checks",
      });
      await until(
        ["batch", "phases", String(batchId)],
        (phases) => phases[0].status !== "dispatched",
        "pre-checks to finish",
      );
      const cutover = await cli("batch", "advance", String(batchId));
      expectOk(cutover);
      expect(cutover.stdout).toBe(`Batch ${batchId}: phase 'cutover' dispatched.\n`);

      const watched = await watch.done;
      expect(watched.stderr).toBe("");
      expect(watched.code).toBe(0);
      const lines = watched.stdout.trimEnd().split("\n");
      // Piped: plain lines, each state once, in order; the last line is the completed batch.
      expect(lines[0]).toMatch(new RegExp(`^\\S+Z {2}batch ${batchId}: new -> detected \\(created\\)$`));
      expect(lines.slice(1, 4)).toEqual([
        "phase pre-checks: pending, no members started",
        "phase cutover: pending, no members started",
        `batch ${batchId} (contoso-pilot v2): detected; members 3 active - waiting for \`matoolkit batch advance ${batchId}\``,
      ]);
      const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
      const preChecksDispatched = at(
        /Z {2}phase pre-checks: pending -> dispatched \(advanced by operator\)$/,
      );
      const preChecksDone = at(
        /^phase pre-checks: completed, 3\/3 succeeded, 0 failed, 0 cancelled, 0 running$/,
      );
      const batchCompleted = at(
        new RegExp(`Z {2}batch ${batchId}: active -> completed \\(2 of 2 phases completed\\)$`),
      );
      expect(preChecksDispatched).toBeGreaterThan(3);
      expect(preChecksDone).toBeGreaterThan(preChecksDispatched);
      expect(batchCompleted).toBeGreaterThan(preChecksDone);
      expect(lines.filter((line) => line.startsWith("phase cutover: completed,"))).toEqual([
        "phase cutover: completed, 3/3 succeeded, 0 failed, 0 cancelled, 0 running",
      ]);
      expect(lines.at(-1)).toBe(`batch ${batchId} (contoso-pilot v2): completed; members 3 active`);
      expect(lines.some((line) => line.includes("\x1b["))).toBe(false);
    });

    it("lists its members, phases, steps and events, and shows it in the batch list", async () => {
      const id = String(batchId);
      const detail = await cli("batch", "get", id);
      expectOk(detail);
      expect(detail.stdout).toMatch(/^Status: +completed$/m);
      expect(detail.stdout).toMatch(/^Outcome: +succeeded \(3 succeeded, 0 failed\)$/m);
      expect(detail.stdout).toMatch(/^\s+1\s+cutover\s+completed\s+succeeded\s+-\s+3\/3 succeeded/m);

      const members = await cli("batch", "members", id);
      expectOk(members);
      expect(members.stdout.trimEnd().split("\n").slice(1)).toEqual([
        expect.stringMatching(/^\s*\d+\s+adele\.vance@contoso\.test\s+active\s/),
        expect.stringMatching(/^\s*\d+\s+alex\.wilber@contoso\.test\s+active\s/),
        expect.stringMatching(/^\s*\d+\s+megan\.bowen@contoso\.test\s+active\s/),
      ]);

      const phases = await cli("batch", "phases", id);
      expectOk(phases);
      expect(phases.stdout).toMatch(/\s0\s+pre-checks\s+2\s+completed\s.*\s3\s+0\s+0\s+0\s+0$/m);

      const steps = await cli("batch", "steps", id);
      expectOk(steps);
      expect(steps.stdout).toMatch(/^Init steps:\n\s*ID\s+STEP/);
      expect(steps.stdout).toMatch(/\screate-batch-group\s+Test-Echo\s+succeeded\s/);
      const stepsJson = await json("batch", "steps", id);
      expect(stepsJson.steps).toHaveLength(12);
      expect(stepsJson.steps.every((s: any) => s.status === "succeeded")).toBe(true);

      const firstPage = await cli("batch", "events", id, "--limit", "3");
      expectOk(firstPage);
      const pageLines = firstPage.stdout.trimEnd().split("\n");
      expect(pageLines[0]).toMatch(/^\s*ID\s+AT\s+ENTITY\s+FROM\s+TO\s+ACTOR\s+REASON$/);
      expect(pageLines).toHaveLength(5);
      const more = /^More: matoolkit batch events (\d+) --after-id (\d+)$/.exec(pageLines[4] ?? "");
      expect(more?.[1]).toBe(id);
      const next = await json("batch", "events", id, "--after-id", more?.[2] ?? "", "--limit", "1000");
      expect(next.items.length).toBeGreaterThan(0);
      expect(next.items.every((e: any) => e.id > Number(more?.[2]))).toBe(true);
      expect(next.nextAfterId).toBeNull();
      // The table names members and steps, with the ids the other commands take.
      const named = await cli("batch", "events", id, "--limit", "1000");
      expectOk(named);
      expect(named.stdout).toMatch(/\s\S+@contoso\.test · \S+ \(step \d+\)\s/);
      expect(named.stdout).toMatch(/\sphase pre-checks \(phase \d+\)\s/);

      const completed = await json("batch", "list", "--status", "completed", "--runbook", "contoso-pilot");
      expect(completed.map((b: any) => b.id)).toEqual([batchId]);
      const listed = await cli("batch", "list", "--limit", "1");
      expectOk(listed);
      expect(listed.stdout).toMatch(
        new RegExp(
          `^\\s*${batchId}\\s+contoso-pilot v2\\s+completed\\s+succeeded\\s+3 active\\s+yes\\s`,
          "m",
        ),
      );
    });

    it("adds a member, removes one, and cancels the batch (a second cancel is refused)", async () => {
      const csv = (rows: string[]) =>
        ["UserPrincipalName,DisplayName,TargetEmail,ProxyAddresses,MigrationDate,PreCheck", ...rows].join(
          "\n",
        );
      const firstCsv = join(scratch, "first.csv");
      const laterCsv = join(scratch, "later.csv");
      writeFileSync(
        firstCsv,
        csv(["lee.gu@contoso.test,Lee Gu,lee.gu@fabrikam.test,,2026-12-05T09:00:00Z,Echo"]),
      );
      writeFileSync(
        laterCsv,
        csv(["lynne.robbins@contoso.test,Lynne Robbins,lynne@fabrikam.test,,2026-12-05T09:00:00Z,Echo"]),
      );
      const created = await cli("batch", "create", "contoso-pilot", firstCsv);
      expectOk(created);
      const [summary, next] = created.stdout.trimEnd().split("\n");
      const id =
        /^Created batch (\d+) of contoso-pilot with 1 members \(status detected\)\.$/.exec(
          summary ?? "",
        )?.[1] ?? "";
      expect(next).toBe(`Next: matoolkit batch advance ${id}`);

      const added = await cli("batch", "add-members", id, laterCsv);
      expectOk(added);
      expect(added.stdout).toMatch(
        new RegExp(`^Added 1 members to batch ${id}\\.\\n\\s*ID\\s+MEMBER KEY\\s+STATUS\\n`),
      );
      expect(added.stdout).toMatch(/\slynne\.robbins@contoso\.test\s+active$/m);

      const members = await json("batch", "members", id);
      expect(members.map((m: any) => m.memberKey)).toEqual([
        "lee.gu@contoso.test",
        "lynne.robbins@contoso.test",
      ]);
      const removed = await cli("batch", "remove-member", id, String(members[0].id));
      expectOk(removed);
      expect(removed.stdout).toBe(`Removed member ${members[0].id} from batch ${id}.\n`);
      expect((await json("batch", "members", id)).map((m: any) => m.status)).toEqual(["removed", "active"]);

      const cancelled = await cli("batch", "cancel", id);
      expectOk(cancelled);
      expect(cancelled.stdout).toMatch(
        new RegExp(`^Batch ${id} cancelled: 2 phases, 0 steps, 0 init steps\\.\\n$`),
      );
      const again = await cli("batch", "cancel", id);
      expect(again.code).toBe(1);
      expect(again.stdout).toBe("");
      expect(again.stderr).toMatch(/^error state\.conflict: .+\n$/);

      // Watching a batch that has ended returns at once; cancelled is exit 4. --json: NDJSON
      // events (unchanged, steps included), then the final batch.
      const watched = await cli("--json", "batch", "watch", id);
      expect(watched.code).toBe(4);
      const documents = watched.stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(documents.at(-1)).toMatchObject({ id: Number(id), status: "cancelled" });
      const events = documents.slice(0, -1);
      expect(events[0]).toMatchObject({ entity: "batch", fromStatus: null, toStatus: "detected" });
      expect(events).toContainEqual(expect.objectContaining({ entity: "batch", toStatus: "cancelled" }));
      expect(events).toContainEqual(expect.objectContaining({ entity: "member", toStatus: "removed" }));
      expect(events.map((e) => e.id)).toEqual([...events.map((e) => e.id)].sort((a, b) => a - b));
    });

    it("pauses a running batch and resumes it (a second pause is refused)", async () => {
      const file = join(scratch, "pause.csv");
      writeFileSync(
        file,
        [
          "UserPrincipalName,DisplayName,TargetEmail,ProxyAddresses,MigrationDate,PreCheck",
          "megan.bowen@contoso.test,Megan Bowen,megan@fabrikam.test,,2026-12-05T09:00:00Z,Echo",
        ].join("\n"),
      );
      const id = String((await json("batch", "create", "contoso-pilot", file)).id);
      expectOk(await cli("batch", "advance", id));
      await until(["batch", "get", id], (b) => b.status === "active", "init to finish");

      const paused = await cli("batch", "pause", id);
      expectOk(paused);
      expect(paused.stdout).toBe(
        `Batch ${id} paused: jobs already sent finish, nothing new is sent.\nNext: matoolkit batch resume ${id}\n`,
      );
      expect((await json("batch", "get", id)).status).toBe("paused");
      const pausedList = await json("batch", "list", "--status", "paused");
      expect(pausedList.map((b: any) => b.id)).toEqual([Number(id)]);
      const again = await cli("batch", "pause", id);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^error state\.conflict: batch \d+ is paused; .+\n$/);

      expect(await json("batch", "resume", id)).toEqual({
        batchId: Number(id),
        status: "active",
        resent: { phases: 0, pollChecks: 0, retryChecks: 0 },
      });
      const resumedAgain = await cli("batch", "resume", id);
      expect(resumedAgain.code).toBe(1);
      expect(resumedAgain.stderr).toMatch(/^error state\.conflict: batch \d+ is active; .+\n$/);
      expectOk(await cli("batch", "cancel", id));
    });

    it("refuses the same CSV twice in a row, naming the batch it made, unless --allow-duplicate", async () => {
      const file = join(scratch, "twice.csv");
      writeFileSync(
        file,
        [
          "UserPrincipalName,DisplayName,TargetEmail,ProxyAddresses,MigrationDate,PreCheck",
          "lynne.robbins@contoso.test,Lynne Robbins,lynne@fabrikam.test,,2026-12-05T09:00:00Z,Echo",
        ].join("\n"),
      );
      const first = await json("batch", "create", "contoso-pilot", file);
      const second = await cli("batch", "create", "contoso-pilot", file);
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(
        new RegExp(`^error batch\\.duplicate: batch ${first.id} was created from the same`),
      );
      const third = await json("batch", "create", "contoso-pilot", file, "--allow-duplicate");
      expect(third.id).toBeGreaterThan(first.id);
      for (const id of [first.id, third.id]) expectOk(await cli("batch", "cancel", String(id)));
    });

    it("shows who paused, resumed and cancelled a batch, in its events and in the audit trail", async () => {
      const file = join(scratch, "audit.csv");
      writeFileSync(
        file,
        [
          "UserPrincipalName,DisplayName,TargetEmail,ProxyAddresses,MigrationDate,PreCheck",
          "adele.vance@contoso.test,Adele Vance,adele@fabrikam.test,,2026-12-05T09:00:00Z,Echo",
        ].join("\n"),
      );
      const id = String((await json("batch", "create", "contoso-pilot", file)).id);
      expectOk(await cli("batch", "advance", id));
      await until(["batch", "get", id], (b) => b.status === "active", "init to finish");
      expectOk(await cli("batch", "pause", id));
      expectOk(await cli("batch", "resume", id));
      expectOk(await cli("batch", "cancel", id));

      const audit = await cli("audit", "--batch", id, "--limit", "1000");
      expectOk(audit);
      const [header, ...rows] = audit.stdout.trimEnd().split("\n");
      expect(header).toMatch(/^ID\s+AT\s+ENTITY\s+FROM\s+TO\s+REASON\s+BATCH\s+ACTOR$/);
      // The operator's own writes, in order, each with the identity the CLI signs as; none of the
      // orchestrator's consequences (init steps, the phases the cancel ended).
      const changes = rows.map((row) => row.split(/\s{2,}/));
      expect(changes.map((cells) => `${cells[3]}>${cells[4]}`)).toEqual([
        "->detected",
        "detected>init_dispatched",
        "active>paused",
        "paused>active",
        "active>cancelled",
      ]);
      expect(changes.every((cells) => cells.at(-1) === "local-admin" && cells.at(-2) === id)).toBe(true);

      const events = await cli("batch", "events", id, "--limit", "1000");
      expectOk(events);
      expect(events.stdout).toMatch(/ paused\s+local-admin\s+paused by operator/);
      // The system's own changes carry no actor.
      expect(events.stdout).toMatch(/ init_dispatched\s+active\s+-\s+init complete/);
    });

    it("lists every member of a batch larger than a page, 500 per request, and the first n with --limit", async () => {
      const count = 1203;
      const file = join(scratch, "many.csv");
      writeFileSync(
        file,
        [
          "UserPrincipalName,DisplayName,TargetEmail,ProxyAddresses,MigrationDate,PreCheck",
          ...Array.from(
            { length: count },
            (_, n) => `user${n}@contoso.test,User ${n},user${n}@fabrikam.test,,2026-12-05T09:00:00Z,Echo`,
          ),
        ].join("\n"),
      );
      const created = await json("batch", "create", "contoso-pilot", file);
      expect(created.memberCount).toBe(count);
      const id = String(created.id);
      const keys = Array.from({ length: count }, (_, n) => `user${n}@contoso.test`);

      // In this process, to see the requests: pages of 500 in id order, each after the last id.
      const requests: URL[] = [];
      const recording: typeof fetch = (input, init) => {
        requests.push(new URL(String(input)));
        return fetch(input, init);
      };
      const listed = await runCliWithFetch(["--json", "batch", "members", id], recording);
      expect(listed.stderr).toBe("");
      const members = JSON.parse(listed.stdout);
      expect(members.map((m: any) => m.memberKey)).toEqual(keys);
      expect(members[0]).toMatchObject({
        batchId: created.id,
        status: "active",
        dataJson: expect.any(Object),
      });
      const pages = requests.filter((url) => url.pathname.endsWith(`/batches/${id}/members`));
      expect(pages.map((url) => [url.searchParams.get("limit"), url.searchParams.get("afterId")])).toEqual([
        ["500", null],
        ["500", String(members[499].id)],
        ["500", String(members[999].id)],
      ]);

      // The human view: the same table as before paging, one row per member.
      const table = await cli("batch", "members", id);
      expectOk(table);
      const rows = table.stdout.trimEnd().split("\n");
      expect(rows[0]).toMatch(/^\s*ID\s+MEMBER KEY\s+STATUS\s+ADDED\s+FAILED\s+REMOVED$/);
      expect(rows.slice(1).map((row) => row.trim().split(/\s+/)[1])).toEqual(keys);

      // --limit: only the first n, across pages too.
      const first = await cli("batch", "members", id, "--limit", "2");
      expectOk(first);
      expect(first.stdout.trimEnd().split("\n").slice(1)).toEqual([
        expect.stringMatching(/^\s*\d+\s+user0@contoso\.test\s+active\s/),
        expect.stringMatching(/^\s*\d+\s+user1@contoso\.test\s+active\s/),
      ]);
      expect((await json("batch", "members", id, "--limit", "501")).map((m: any) => m.memberKey)).toEqual(
        keys.slice(0, 501),
      );
      const refused = await cli("batch", "members", id, "--limit", "0");
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/--limit/);
    });
  });

  describe("webhooks", () => {
    it("adds one (secret shown once), lists it, pings it, shows its deliveries and removes it", async () => {
      const added = await cli(
        "webhook",
        "add",
        "http://127.0.0.1:9/hook",
        "--events",
        "batch.completed,member.failed",
      );
      expectOk(added);
      const secret = /^Secret: +(\S+)$/m.exec(added.stdout)?.[1];
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const id = /^Webhook: +(\d+)$/m.exec(added.stdout)?.[1] ?? "";

      const list = await cli("webhook", "list");
      expectOk(list);
      expect(list.stdout).toMatch(
        new RegExp(`^\\s*${id}\\s+\\*\\s+batch\\.completed,member\\.failed\\s+yes\\s`, "m"),
      );
      expect(list.stdout).not.toContain(secret);

      const ping = await cli("webhook", "test", id);
      expectOk(ping);
      expect(ping.stdout).toMatch(/^Ping queued as delivery \d+\.$/m);
      const deliveries = await json("webhook", "deliveries", id);
      expect(deliveries.items.map((d: any) => d.event)).toEqual(["ping"]);

      const refused = await cli("webhook", "add", "http://127.0.0.1:9/hook", "--events", "batch.done");
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain("--events");
      // The outbound policy, with the reason: the allow-list names 127.0.0.1, not the metadata address.
      const metadata = await cli(
        "webhook",
        "add",
        "http://169.254.169.254/latest",
        "--events",
        "batch.completed",
      );
      expect(metadata.code).not.toBe(0);
      expect(metadata.stderr).toContain(
        "address 169.254.169.254 is link-local (cloud metadata), not allowed",
      );

      expectOk(await cli("webhook", "remove", id));
      expect(await json("webhook", "list")).toEqual([]);
    });
  });

  describe("runbook versions", () => {
    it("deactivates versions: an old one is already inactive, the active one leaves the runbook without one", async () => {
      const old = await cli("runbook", "delete", "contoso-pilot", "1");
      expectOk(old);
      expect(old.stdout).toBe("contoso-pilot version 1 was already inactive.\n");
      expect(await json("runbook", "delete", "contoso-pilot", "2")).toMatchObject({
        version: 2,
        alreadyInactive: false,
      });
      const gone = await cli("runbook", "get", "contoso-pilot");
      expect(gone.code).toBe(1);
      expect(gone.stderr).toBe("error resource.not_found: no active runbook named 'contoso-pilot'\n");
    });
  });

  describe("auth in local mode", () => {
    it("needs no sign-in and shows the key and role it signs with", async () => {
      const login = await cli("auth", "login");
      expectOk(login);
      expect(login.stdout).toBe(
        `auth-mode is local: no sign-in needed; each command signs a token with role Admin using ${join(dataDir, "auth", "signing-key.json")}.\n`,
      );
      expect(await json("auth", "status")).toEqual({
        mode: "local",
        account: "local-admin",
        role: "Admin",
        keyFile: join(dataDir, "auth", "signing-key.json"),
        keyPresent: true,
        tokenLifetimeSeconds: 600,
      });
    });
  });

  describe("errors and exit codes", () => {
    it("says why there is no tenant change log when the worker has no simulated tenant (a database server, no MATOOLKIT_TENANT)", async () => {
      const changes = await cli("tenant", "changes");
      expect(changes.code).toBe(1);
      expect(changes.stdout).toBe("");
      expect(changes.stderr).toBe(
        "error resource.not_found: No tenant change log: only a simulated tenant in this process records its " +
          "changes (start with MATOOLKIT_TENANT=simulated, the default of npm start)\n",
      );
    });

    it("exits 1 with the API's code and message for a token the server does not trust or a missing role", async () => {
      const otherDir = mkdtempSync(join(tmpdir(), "matoolkit-cli-other-key-"));
      try {
        await loadOrCreateLocalSigningKey(otherDir);
        const untrusted = await cli("runbook", "list", "--data-dir", otherDir);
        expect(untrusted.code).toBe(1);
        expect(untrusted.stdout).toBe("");
        expect(untrusted.stderr).toMatch(/^error auth\.unauthenticated: \S.*\n$/);
      } finally {
        rmSync(otherDir, { recursive: true, force: true });
      }
      const reader = await cli("--role", "Reader", "automation", "enable", "contoso-pilot");
      expect(reader.code).toBe(1);
      expect(reader.stderr).toBe("error auth.forbidden: This operation requires the Admin role\n");
      expect((await cli("--role", "Reader", "batch", "list")).code).toBe(0);
    });

    it("exits 1 naming the key file when the data dir has no signing key, and when the API is unreachable", async () => {
      const empty = mkdtempSync(join(tmpdir(), "matoolkit-cli-no-key-"));
      try {
        const missing = await cliWith({ MATOOLKIT_DATA_DIR: empty }, "batch", "list");
        expect(missing.code).toBe(1);
        expect(missing.stderr).toBe(
          `error auth.local_key_missing: no local signing key at ${join(empty, "auth", "signing-key.json")}: start the ` +
            "server first (npm start, which creates it), or point --data-dir / MATOOLKIT_DATA_DIR at the server's data directory\n",
        );
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }
      const closed = `http://127.0.0.1:${await closedPort()}/api`;
      const unreachable = await cli("--api-url", closed, "batch", "list");
      expect(unreachable.code).toBe(1);
      expect(unreachable.stderr).toBe(
        `error network.unreachable: cannot reach the admin API at ${closed} (ECONNREFUSED): is the server running, and is api-url right?\n`,
      );
    });

    it("exits 2 on usage errors: a non-numeric id, an unknown command, a missing argument, a bad option value", async () => {
      for (const args of [
        ["batch", "get", "abc"],
        ["batch", "frobnicate"],
        ["batch", "create", "contoso-pilot"],
        ["batch", "list", "--status", "sleeping"],
        ["batch", "watch", "1", "--interval", "0"],
        ["--auth-mode", "kerberos", "batch", "list"],
      ]) {
        const result = await cli(...args);
        expect({ args, code: result.code }).toEqual({ args, code: 2 });
        expect(result.stdout).toBe("");
        expect(result.stderr).toMatch(/error/);
      }
    });
  });

  describe("configuration", () => {
    it("takes each setting from the flag, else the environment, else the config file, and shows where from", async () => {
      const configFile = env.MATOOLKIT_CONFIG ?? "";
      const closed = `http://127.0.0.1:${await closedPort()}/api`;
      expectOk(await cli("config", "set", "api-url", closed));
      expectOk(await cli("config", "set", "role", "Reader"));
      expect(statSync(configFile).mode & 0o777).toBe(0o600);
      expect(statSync(join(scratch, "config")).mode & 0o777).toBe(0o700);
      expect(JSON.parse(readFileSync(configFile, "utf8"))).toEqual({ "api-url": closed, role: "Reader" });

      const fromFile = await runCliProcess(["--json", "config", "show"], { ...env, MATOOLKIT_API_URL: "" });
      expect(JSON.parse(fromFile.stdout)["api-url"]).toEqual({ value: closed, source: "file" });
      const shown = await cli("--json", "config", "show");
      expect(JSON.parse(shown.stdout)).toMatchObject({
        "api-url": { value: env.MATOOLKIT_API_URL, source: "env" },
        role: { value: "Reader", source: "file" },
        "data-dir": { value: dataDir, source: "env" },
        "auth-mode": { value: "local", source: "default" },
        "tenant-id": { source: "unset" },
      });
      const table = await cli("config", "show", "--api-url", closed);
      expectOk(table);
      expect(table.stdout).toMatch(new RegExp(`^api-url\\s+${closed}\\s+flag --api-url$`, "m"));
      expect(table.stdout).toMatch(/^data-dir\s+\S+\s+env MATOOLKIT_DATA_DIR$/m);
      expect(table.stdout).toMatch(/^role\s+Reader\s+file$/m);

      // The order really applies: the env's URL beats the file's closed port, a flag beats both.
      expectOk(await cli("batch", "list"));
      expect((await cli("batch", "list", "--api-url", closed)).stderr).toContain(
        `error network.unreachable: cannot reach the admin API at ${closed} `,
      );
      // The file's role (Reader) applies where no flag or variable overrides it.
      expect((await cli("automation", "enable", "contoso-pilot")).stderr).toMatch(/^error auth\.forbidden: /);
    });

    it("refuses unknown keys and bad values (exit 2) and names the file and key of a broken config file", async () => {
      const unknown = await cli("config", "set", "colour", "blue");
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toBe(
        "error config.unknown_key: unknown key 'colour' (allowed: api-url, auth-mode, data-dir, role, tenant-id, client-id, api-scope, authority-host)\n",
      );
      const bad = await cli("config", "set", "auth-mode", "kerberos");
      expect(bad.code).toBe(2);
      expect(bad.stderr).toBe("error config.invalid: auth-mode: must be one of local, entra\n");

      const configFile = env.MATOOLKIT_CONFIG ?? "";
      writeFileSync(configFile, JSON.stringify({ "api-url": "http://127.0.0.1:9/api", colour: "blue" }));
      const unknownInFile = await cli("batch", "list");
      expect(unknownInFile.code).toBe(2);
      expect(unknownInFile.stderr).toBe(
        `error config.invalid: config file ${configFile}: unknown key 'colour' (allowed: api-url, auth-mode, data-dir, role, tenant-id, client-id, api-scope, authority-host)\n`,
      );
      writeFileSync(configFile, "{ not json");
      const broken = await cli("batch", "list");
      expect(broken.code).toBe(2);
      expect(broken.stderr).toMatch(
        new RegExp(`^error config\\.invalid: config file ${configFile} is not valid JSON: `),
      );
      writeFileSync(configFile, JSON.stringify({ role: "Reader", "auth-mode": "local" }));
      const unset = await cli("config", "unset", "role");
      expect(unset.stdout).toBe(`Removed role from ${configFile}\n`);
      expect(JSON.parse(readFileSync(configFile, "utf8"))).toEqual({ "auth-mode": "local" });

      const where = await cli("config", "path");
      expectOk(where);
      expect(where.stdout).toBe(`${configFile}\n`);
    });
  });
});
