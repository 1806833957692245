import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrCreateLocalSigningKey } from "@matoolkit/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../run.ts";

/**
 * `matoolkit batch redrive` against an API stand-in: which body each flag sends, the human and
 * --json output, and the invocations refused before anything is sent (exit 2). The API's own
 * behaviour is tested in admin-api's batch-redrive.routes.test.ts.
 */
let scratch: string;
let env: Record<string, string>;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "matoolkit-cli-redrive-"));
  const dataDir = join(scratch, "data");
  await loadOrCreateLocalSigningKey(dataDir);
  env = {
    HOME: join(scratch, "home"),
    MATOOLKIT_CONFIG: join(scratch, "config.json"),
    MATOOLKIT_API_URL: "http://matoolkit.test/api",
    MATOOLKIT_DATA_DIR: dataDir,
  };
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

interface Sent {
  readonly method: string;
  readonly url: string;
  readonly body: unknown;
}

const answer = {
  batchId: 7,
  batchStatus: "active",
  redriven: [
    {
      memberId: 12,
      steps: [
        { id: 40, phaseExecutionId: 3, stepName: "move-mailbox", jobId: "step-40-redrive-1" },
        { id: 41, phaseExecutionId: 3, stepName: "notify", jobId: "step-41-redrive-1" },
      ],
    },
  ],
};

async function run(args: string[], reply: { status: number; body: unknown } = { status: 202, body: answer }) {
  const sent: Sent[] = [];
  let stdout = "";
  let stderr = "";
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    sent.push({
      method: init?.method ?? "GET",
      url: String(input),
      body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined,
    });
    const type = reply.status >= 400 ? "application/problem+json" : "application/json";
    return new Response(JSON.stringify(reply.body), {
      status: reply.status,
      headers: { "content-type": type },
    });
  }) as typeof fetch;
  const code = await runCli(args, {
    env,
    cwd: scratch,
    home: env.HOME!,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    fetch: fetchFn,
    sleep: async () => {},
    now: () => new Date(),
  });
  return { code, stdout, stderr, sent };
}

describe("matoolkit batch redrive", () => {
  it.each([
    [["--all-failed"], { members: "failed" }],
    [["--member", "12", "--member", "13", "--member", "12"], { memberIds: [12, 13] }],
    [["--step", "40"], { stepExecutionId: 40 }],
  ])("%j sends %j to POST /api/batches/7/redrive", async (flags, body) => {
    const result = await run(["batch", "redrive", "7", ...flags]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.sent).toEqual([
      { method: "POST", url: "http://matoolkit.test/api/batches/7/redrive", body },
    ]);
  });

  it("prints what was redriven and the job id each step runs with next; --json prints the answer", async () => {
    const human = await run(["batch", "redrive", "7", "--all-failed"]);
    const lines = human.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("Batch 7: 1 member(s) redriven, 2 step(s) to run again (batch active).");
    expect(lines[1]).toMatch(/^MEMBER\s+STEP\s+NAME\s+NEXT JOB$/);
    expect(lines.slice(2)).toEqual([
      expect.stringMatching(/^\s*12\s+40\s+move-mailbox\s+step-40-redrive-1$/),
      expect.stringMatching(/^\s*12\s+41\s+notify\s+step-41-redrive-1$/),
    ]);
    const json = await run(["--json", "batch", "redrive", "7", "--all-failed"]);
    expect(JSON.parse(json.stdout)).toEqual(answer);
  });

  it("says how to go on when the batch is paused", async () => {
    const paused = await run(["batch", "redrive", "7", "--all-failed"], {
      status: 202,
      body: { ...answer, batchStatus: "paused" },
    });
    expect(paused.stdout).toContain("Nothing runs until: matoolkit batch resume 7");
  });

  it.each([
    [[], /say what to redrive: --all-failed, --member <id> \(repeatable\) or --step <id>/],
    [
      ["--all-failed", "--step", "3"],
      /give only one of --all-failed, --member or --step, not --all-failed and --step/,
    ],
  ])("refuses %j before sending anything (exit 2)", async (flags, message) => {
    const result = await run(["batch", "redrive", "7", ...flags]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.sent).toEqual([]);
  });

  it("refuses an id that is not a positive number (exit 2, nothing sent)", async () => {
    const result = await run(["batch", "redrive", "7", "--member", "abc"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("must be a positive whole number");
    expect(result.sent).toEqual([]);
  });

  it("reports the API's refusal with its code (exit 1)", async () => {
    const result = await run(["batch", "redrive", "7", "--member", "13"], {
      status: 409,
      body: {
        type: "/problems/state.conflict",
        title: "Conflict with the current state",
        status: 409,
        code: "state.conflict",
        detail: "only failed members can be redriven: member 13 is active; nothing was redriven",
        problems: [{ path: "memberIds.0", message: "member 13 is active" }],
      },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("state.conflict");
    expect(result.stderr).toContain("member 13 is active");
  });
});
