import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrCreateLocalSigningKey } from "@matoolkit/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../run.ts";

/**
 * `matoolkit purge` and `matoolkit member erase` (issue 31 item 2) against an API stand-in: the
 * request each sends, the human and --json output, and a refusal. The API's own behaviour is
 * tested in admin-api's retention.routes.test.ts.
 */
let scratch: string;
let env: Record<string, string>;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "matoolkit-cli-retention-"));
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

const report = {
  dryRun: true,
  mode: "scrub",
  retentionDays: 90,
  endedBefore: "2026-08-29T08:00:00.000Z",
  batches: [
    { batchId: 4, status: "completed", endedAt: "2026-05-01T10:00:00.000Z", members: 120 },
    { batchId: 9, status: "cancelled", endedAt: "2026-06-02T10:00:00.000Z", members: 3 },
  ],
  more: false,
};

async function run(args: string[], reply: { status: number; body: unknown }) {
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

describe("matoolkit purge", () => {
  it("--dry-run asks for a dry run and lists the batches with their member counts", async () => {
    const result = await run(["purge", "--dry-run"], { status: 200, body: report });
    expect(result.code).toBe(0);
    expect(result.sent).toEqual([
      { method: "POST", url: "http://matoolkit.test/api/purge?dryRun=true", body: undefined },
    ]);
    expect(result.stdout).toContain(
      "Dry run: 2 batch(es) ended before 2026-08-29T08:00:00.000Z would be purged (scrub, retention 90 days).",
    );
    expect(result.stdout).toMatch(/BATCH\s+STATUS\s+ENDED\s+MEMBERS/);
    expect(result.stdout).toMatch(/4\s+completed\s+2026-05-01T10:00:00.000Z\s+120/);
  });

  it("without --dry-run purges now, says when more are due, and --json prints the answer", async () => {
    const answer = { ...report, dryRun: false, more: true };
    const result = await run(["purge"], { status: 200, body: answer });
    expect(result.sent[0]!.url).toBe("http://matoolkit.test/api/purge?dryRun=false");
    expect(result.stdout).toContain("2 batch(es) ended before 2026-08-29T08:00:00.000Z purged (scrub");
    expect(result.stdout).toContain("More batches are due: run matoolkit purge again.");
    const json = await run(["--json", "purge"], { status: 200, body: answer });
    expect(JSON.parse(json.stdout)).toEqual(answer);
  });

  it("reports retention being off (409) with exit 1", async () => {
    const result = await run(["purge"], {
      status: 409,
      body: {
        type: "/problems/state.conflict",
        title: "Conflict with the current state",
        status: 409,
        code: "state.conflict",
        detail: "retention is off (MATOOLKIT_RETENTION_DAYS is 0 or off): nothing is purged",
      },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("retention is off");
  });
});

describe("matoolkit member erase", () => {
  const erased = { batchIds: [4, 9], erasedMembers: 2, erasedSteps: 6 };

  it("sends DELETE /api/members/{key} with the key escaped, and does not print the key back", async () => {
    const result = await run(["member", "erase", "megan b@contoso.test"], { status: 200, body: erased });
    expect(result.code).toBe(0);
    expect(result.sent).toEqual([
      {
        method: "DELETE",
        url: "http://matoolkit.test/api/members/megan%20b%40contoso.test",
        body: undefined,
      },
    ]);
    expect(result.stdout).toBe("Erased 2 member row(s) in batch(es) 4, 9; 6 step(s) emptied.\n");
  });

  it("--force asks to erase in running batches too; a repeat says nothing was left", async () => {
    const result = await run(["member", "erase", "megan@contoso.test", "--force"], {
      status: 200,
      body: { ...erased, erasedMembers: 0, erasedSteps: 0 },
    });
    expect(result.sent[0]!.url).toBe("http://matoolkit.test/api/members/megan%40contoso.test?force=true");
    expect(result.stdout).toBe("Nothing left to erase: already erased in batch(es) 4, 9.\n");
  });

  it("reports the 409 of a running batch with exit 1", async () => {
    const result = await run(["member", "erase", "megan@contoso.test"], {
      status: 409,
      body: {
        type: "/problems/state.conflict",
        title: "Conflict with the current state",
        status: 409,
        code: "state.conflict",
        detail:
          "the member is in running batch(es) 12: cancel them, wait for them to end, or send force=true",
      },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("running batch(es) 12");
  });
});

describe("matoolkit batch get", () => {
  const detail = {
    id: 4,
    runbookId: 1,
    runbookName: "mailboxes",
    runbookVersion: 2,
    status: "completed",
    isManual: false,
    batchStartTime: "2026-04-01T00:00:00.000Z",
    detectedAt: "2026-03-30T00:00:00.000Z",
    initDispatchedAt: null,
    createdBy: null,
    currentPhase: null,
    outcome: "succeeded",
    succeededMembers: 120,
    failedMembers: 0,
    memberCounts: { active: 120 },
    phases: [],
  };

  it("says when the batch's personal data was purged, and says nothing before", async () => {
    const purged = await run(["batch", "get", "4"], {
      status: 200,
      body: { ...detail, purgedAt: "2026-08-01T03:00:00.000Z", purgeMode: "scrub" },
    });
    expect(purged.code).toBe(0);
    expect(purged.stdout).toMatch(/Personal data:?\s+purged on 2026-08-01T03:00:00.000Z \(scrub\)/);
    const kept = await run(["batch", "get", "4"], {
      status: 200,
      body: { ...detail, purgedAt: null, purgeMode: null },
    });
    expect(kept.stdout).not.toContain("Personal data");
  });
});
