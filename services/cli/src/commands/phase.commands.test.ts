import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrCreateLocalSigningKey } from "@matoolkit/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../run.ts";

/**
 * `matoolkit phase approve | reject <batch-id> <seq>` (issue 30) and `batch advance` into a gated
 * phase, against an API stand-in: the request each sends, the human and --json output, the
 * refusals before anything is sent (exit 2) and the API's own (exit 1). The API's behaviour is
 * tested in admin-api's phase-approval.routes.test.ts.
 */
let scratch: string;
let env: Record<string, string>;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "matoolkit-cli-phase-"));
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
  readonly authorized: boolean;
}

const approved = {
  batchId: 7,
  phaseExecutionId: 21,
  phaseName: "cutover",
  sequence: 2,
  status: "dispatched",
  approvalDecision: "approved",
};
const rejected = { ...approved, status: "failed", approvalDecision: "rejected" };

async function run(args: string[], reply: { status: number; body: unknown }) {
  const sent: Sent[] = [];
  let stdout = "";
  let stderr = "";
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    sent.push({
      method: init?.method ?? "GET",
      url: String(input),
      authorized: headers.get("authorization")?.startsWith("Bearer ") === true,
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

describe("matoolkit phase approve | reject", () => {
  it("approves: POST …/phases/{seq}/approve, signed, and says the phase is dispatched", async () => {
    const result = await run(["phase", "approve", "7", "2"], { status: 202, body: approved });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.sent).toEqual([
      { method: "POST", url: "http://matoolkit.test/api/batches/7/phases/2/approve", authorized: true },
    ]);
    expect(result.stdout).toBe("Batch 7: phase 'cutover' (2) approved and dispatched.\n");
  });

  it("rejects, also as `phases reject`; --json prints the answer unchanged", async () => {
    const human = await run(["phases", "reject", "7", "0"], { status: 200, body: rejected });
    expect(human.code).toBe(0);
    expect(human.sent.map((request) => request.url)).toEqual([
      "http://matoolkit.test/api/batches/7/phases/0/reject",
    ]);
    expect(human.stdout).toBe(
      "Batch 7: phase 'cutover' (2) rejected: it failed (phase.rejected), nothing was sent.\n",
    );
    const json = await run(["--json", "phase", "reject", "7", "2"], { status: 200, body: rejected });
    expect(JSON.parse(json.stdout)).toEqual(rejected);
  });

  it.each([
    [["phase", "approve", "7"], /missing required argument 'seq'/],
    [["phase", "approve", "7", "-1"], /must be a whole number/],
    [["phase", "reject", "x", "1"], /must be a positive whole number/],
    [["phase", "decide", "7", "1"], /unknown command 'decide'/],
  ])("refuses %j before sending anything (exit 2)", async (args, message) => {
    const result = await run(args, { status: 202, body: approved });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.sent).toEqual([]);
  });

  it("reports the API's refusal with its code (exit 1): a paused batch", async () => {
    const result = await run(["phase", "approve", "7", "2"], {
      status: 409,
      body: {
        type: "/problems/state.conflict",
        title: "Conflict with the current state",
        status: 409,
        code: "state.conflict",
        detail: "batch 7 is paused; resume it before approving phase cutover (2) of batch 7",
      },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("state.conflict");
    expect(result.stderr).toContain("resume it before approving");
  });
});

describe("matoolkit batch advance into a gated phase", () => {
  it("says the phase awaits approval and how to approve it", async () => {
    const result = await run(["batch", "advance", "7"], {
      status: 202,
      body: {
        action: "phase",
        batchId: 7,
        phaseName: "cutover",
        phaseExecutionId: 21,
        sequence: 2,
        phaseStatus: "awaiting_approval",
      },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      "Batch 7: phase 'cutover' awaits approval; nothing was sent.\n" +
        "Next: matoolkit phase approve 7 2 (or: matoolkit phase reject …)\n",
    );
  });
});

describe("matoolkit batch get of a gated batch", () => {
  const phase = (sequence: number, name: string, status: string, gate: Record<string, unknown>) => ({
    id: 20 + sequence,
    phaseName: name,
    sequence,
    status,
    dueAt: null,
    outcome: null,
    succeededMembers: null,
    failedMembers: null,
    approvalExpiresAt: null,
    approvalDecision: null,
    ...gate,
    memberCounts: { succeeded: 0, skipped: 0, failed: 0, cancelled: 0, running: 0 },
  });

  it("shows an APPROVAL column saying what each gate waits for", async () => {
    const result = await run(["batch", "get", "7"], {
      status: 200,
      body: {
        id: 7,
        runbookId: 3,
        runbookName: "contoso-to-fabrikam",
        runbookVersion: 1,
        batchStartTime: null,
        status: "active",
        detectedAt: "2026-01-01T00:00:00.000Z",
        initDispatchedAt: null,
        isManual: true,
        createdBy: "local-admin",
        currentPhase: "cutover",
        outcome: null,
        succeededMembers: null,
        failedMembers: null,
        memberCounts: { active: 3 },
        phases: [
          phase(0, "pre-checks", "completed", { approvalRequired: false }),
          phase(1, "cutover", "awaiting_approval", {
            approvalRequired: true,
            approvalExpiresAt: "2026-01-01T04:00:00.000Z",
          }),
          phase(2, "cleanup", "pending", { approvalRequired: true }),
        ],
      },
    });
    expect(result.stderr).toBe("");
    const table = result.stdout.slice(result.stdout.indexOf("SEQ")).trimEnd().split("\n");
    expect(table[0]).toMatch(/^SEQ\s+PHASE\s+STATUS\s+OUTCOME\s+DUE\s+APPROVAL\s+MEMBERS$/);
    expect(table[2]).toMatch(
      /^\s+1\s+cutover\s+awaiting_approval\s+-\s+-\s+awaiting until 2026-01-01T04:00:00.000Z\s/,
    );
    expect(table[3]).toMatch(/^\s+2\s+cleanup\s+pending\s+-\s+-\s+required\s/);
  });
});
