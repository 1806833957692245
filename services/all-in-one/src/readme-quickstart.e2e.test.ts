import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "@matoolkit/testing";

/**
 * The README's Quickstart, run as written: its `sh` blocks are read from README.md and every
 * command is run by bash from the repository root, so a Quickstart that stops working fails here.
 * `npm start` runs as the README says, in embedded mode on a PostgreSQL of its own (a new data
 * directory: this file's database), with the listening ports and the data directory moved by
 * environment variables so it never meets a developer's own server; the CLI is pointed at it the
 * same way. Only `npm install` is not run: the tests already run on what it installed.
 */

const repoRoot = resolve(fileURLToPath(import.meta.url), "../../../..");

export interface QuickstartCommand {
  /** The line as written (a trailing `# comment` included: bash ignores it). */
  readonly text: string;
  /** The comment after the command on its line, if any. */
  readonly comment: string | undefined;
  /** `#    …` lines right below the command: what it prints (`…` stands for anything). */
  readonly expectedOutput: readonly string[];
}

/**
 * The commands of the `sh` blocks in README.md's `## Quickstart` section (up to the next heading
 * of level 1 to 3), in order. Comment-only lines are prose, except `#` followed by four spaces
 * right below a command, which is that command's output as the README shows it.
 */
export function quickstartCommands(markdown: string): QuickstartCommand[] {
  const lines = markdown.split("\n");
  const start = lines.indexOf("## Quickstart");
  if (start < 0) throw new Error("README.md has no '## Quickstart' section");
  const commands: Array<QuickstartCommand & { expectedOutput: string[] }> = [];
  let fence: string | undefined;
  let continued = "";
  for (const line of lines.slice(start + 1)) {
    if (fence === undefined && /^#{1,3} /u.test(line)) break;
    const opening = /^```(\w*)\s*$/u.exec(line);
    if (opening !== null) {
      fence = fence === undefined ? opening[1] : undefined;
      continue;
    }
    if (fence !== "sh") continue;
    const trimmed = line.trim();
    if (trimmed === "" && continued === "") continue;
    const output = /^# {4}(.*)$/u.exec(trimmed);
    if (output !== null && continued === "") {
      const last = commands.at(-1);
      if (last === undefined) throw new Error(`output comment before any command: ${line}`);
      last.expectedOutput.push(output[1]!.trim());
      continue;
    }
    if (trimmed.startsWith("#") && continued === "") continue;
    if (trimmed.endsWith("\\")) {
      continued += `${trimmed.slice(0, -1).trimEnd()} `;
      continue;
    }
    const text = `${continued}${trimmed}`;
    continued = "";
    const comment = /\s#\s*(.*)$/u.exec(text)?.[1]?.trim();
    commands.push({ text, comment, expectedOutput: [] });
  }
  return commands;
}

/** `expected` with `…` matching anything, as a whole line of `output`. */
function hasLine(output: string, expected: string): boolean {
  const pattern = expected
    .split("…")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&"))
    .join(".*");
  return new RegExp(`^\\s*${pattern}\\s*$`, "mu").test(output);
}

interface Ran {
  readonly command: QuickstartCommand;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runBash(
  command: string,
  env: Readonly<Record<string, string>>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn("bash", ["-c", command], { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", fail);
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

const scratch = mkdtempSync(join(tmpdir(), "matoolkit-readme-quickstart-"));
const dataDir = join(scratch, "data");
let server: ChildProcess | undefined;

afterAll(async () => {
  if (server?.pid !== undefined && server.exitCode === null) {
    const exited = new Promise((done) => server!.once("exit", done));
    process.kill(-server.pid, "SIGINT");
    const killer = setTimeout(() => process.kill(-server!.pid!, "SIGKILL"), 60_000);
    await exited;
    clearTimeout(killer);
  }
  rmSync(scratch, { recursive: true, force: true });
});

describe("README.md's Quickstart section", () => {
  it("is read as the commands a new user types: npm install, npm start, then the CLI", () => {
    const sample = [
      "# Title",
      "## Quickstart",
      "```sh",
      "npm start          # prints: ready",
      "```",
      "```text",
      "not a command",
      "```",
      "```sh",
      "# a prose comment",
      "npx matoolkit runbook publish x.yaml",
      "#    Published x version 1 (id …).",
      "                   #         and more",
      "FOO=1 \\",
      "  npx matoolkit batch get 1     # Outcome: done",
      "```",
      "### Next",
      "```sh",
      "npx matoolkit not-in-the-quickstart",
      "```",
    ].join("\n");
    expect(quickstartCommands(sample)).toEqual([
      { text: "npm start          # prints: ready", comment: "prints: ready", expectedOutput: [] },
      {
        text: "npx matoolkit runbook publish x.yaml",
        comment: undefined,
        expectedOutput: ["Published x version 1 (id …).", "and more"],
      },
      {
        text: "FOO=1 npx matoolkit batch get 1     # Outcome: done",
        comment: "Outcome: done",
        expectedOutput: [],
      },
    ]);
  });

  it(
    "rehearses the migration it describes on the simulated tenant: 2 members migrated, 1 stopped by its pre-check, the tenant changes listed",
    { timeout: 900_000 },
    async () => {
      const commands = quickstartCommands(readFileSync(join(repoRoot, "README.md"), "utf8"));
      expect(commands.map((command) => command.text.split(/\s+/u).slice(0, 2).join(" ")).slice(0, 2)).toEqual(
        ["npm install", "npm start"],
      );
      const [, start, ...cliCommands] = commands;

      const port = await freePort();
      chmodSync(scratch, 0o755); // as root the embedded server runs as `postgres`, which must enter it
      // The test's own Node first (npm, npx and tsx run on it), nothing of the developer's own
      // MATOOLKIT_* settings or database: the Quickstart is about a machine with none.
      const base: Record<string, string> = {
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
        HOME: join(scratch, "home"),
        npm_config_update_notifier: "false",
        npm_config_fund: "false",
        npm_config_audit: "false",
      };
      const serverEnv = {
        ...base,
        PORT: String(port),
        MATOOLKIT_EMBEDDED_PG_PORT: String(await freePort()),
        MATOOLKIT_DATA_DIR: dataDir,
      };
      const cliEnv = {
        ...base,
        MATOOLKIT_API_URL: `http://127.0.0.1:${port}/api`,
        MATOOLKIT_DATA_DIR: dataDir,
        MATOOLKIT_CONFIG: join(scratch, "cli-config.json"),
      };

      // `npm start`, in a process group of its own (as a terminal job), followed until it serves.
      server = spawn("bash", ["-c", start!.text], {
        cwd: repoRoot,
        env: serverEnv,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let serverOutput = "";
      server.stdout!.setEncoding("utf8").on("data", (chunk: string) => (serverOutput += chunk));
      server.stderr!.setEncoding("utf8").on("data", (chunk: string) => (serverOutput += chunk));
      // Generous: a fresh clone builds the dashboard and initialises PostgreSQL first.
      const startDeadline = Date.now() + 600_000;
      while (!serverOutput.includes("  try:")) {
        if (server.exitCode !== null || Date.now() > startDeadline) {
          throw new Error(`npm start did not start:\n${serverOutput}`);
        }
        await new Promise((done) => setTimeout(done, 200));
      }
      // What the README says it prints, on the port this test gave it.
      const printed = [start!.comment ?? "", ...start!.expectedOutput]
        .map((claim) => claim.replace(/^prints:\s*/u, "").replace("127.0.0.1:8080", `127.0.0.1:${port}`))
        .filter((claim) => claim !== "");
      for (const claim of printed) expect(serverOutput, `npm start prints "${claim}"`).toContain(claim);
      expect(serverOutput).toContain("simulated tenant — nothing real is touched");

      const ran: Ran[] = [];
      for (const command of cliCommands) {
        // "Advancing while the previous phase still runs is refused (state.conflict): run it
        // again once that phase has finished": what the README tells the reader to do.
        const deadline = Date.now() + 300_000;
        for (;;) {
          const result = await runBash(command.text, cliEnv);
          const refusedWhileRunning =
            / batch advance /u.test(command.text) &&
            result.code === 1 &&
            result.stderr.includes("error state.conflict");
          if (!refusedWhileRunning || Date.now() > deadline) {
            ran.push({ command, ...result });
            break;
          }
          await new Promise((done) => setTimeout(done, 500));
        }
        const last = ran.at(-1)!;
        if (process.env.QUICKSTART_TRANSCRIPT === "1") {
          process.stdout.write(`$ ${command.text}\n${last.stdout}${last.stderr}\n`);
        }
        const shown = `$ ${command.text}\n${last.stdout}${last.stderr}`;
        expect(last.code, shown).toBe(0);
        expect(last.stderr, shown).toBe("");
        for (const line of command.expectedOutput) expect(hasLine(last.stdout, line), shown).toBe(true);
        // `batch advance`'s comment is what it prints.
        if (/ batch advance /u.test(command.text) && command.comment !== undefined) {
          expect(hasLine(last.stdout, command.comment), shown).toBe(true);
        }
      }

      // The outcome the README states, read from what its own commands printed.
      const outputOf = (prefix: string): string => {
        const found = ran.filter((r) => r.command.text.startsWith(prefix)).at(-1);
        if (found === undefined) throw new Error(`the Quickstart no longer runs "${prefix}"`);
        return found.stdout;
      };
      const batch = outputOf("npx matoolkit batch get 1");
      expect(batch).toMatch(/^Status:\s+completed$/mu);
      expect(batch).toMatch(/^Outcome:\s+partially_succeeded \(2 succeeded, 1 failed\)$/mu);
      const members = outputOf("npx matoolkit batch members 1");
      expect(members).toMatch(/^\s*\d+\s+adele\.vance@contoso\.example\s+active\s/mu);
      expect(members).toMatch(/^\s*\d+\s+megan\.bowen@contoso\.example\s+active\s/mu);
      expect(members).toMatch(/^\s*\d+\s+isaiah\.langer@contoso\.example\s+failed\s/mu);
      expect(outputOf("npx matoolkit batch steps 1")).toContain("check.mismatch");
      const changes = outputOf("npx matoolkit tenant changes");
      expect(changes).toMatch(/^SEQ\s+MEMBER\s+OBJECT\s+OPERATION\s+CHANGE$/mu);
      expect(changes).toMatch(
        /isaiah\.langer@contoso\.example\s+Contoso migration - wave 1\s+.*removed member isaiah\.langer\.contoso@fabrikam\.example/u,
      );
      for (const name of ["adele.vance", "megan.bowen"]) {
        expect(changes).toContain(`userPrincipalName="${name}@fabrikam.example"`);
        expect(changes).toContain(`PrimarySmtpAddress="${name}@fabrikam.example"`);
      }
      // Nothing was written for Isaiah besides leaving the wave group.
      expect(
        changes.split("\n").filter((line) => line.includes("isaiah.langer@contoso.example")),
      ).toHaveLength(1);
    },
  );
});
