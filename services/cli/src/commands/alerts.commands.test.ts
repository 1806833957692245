import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrCreateLocalSigningKey } from "@matoolkit/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../run.ts";

/**
 * `matoolkit alerts` against an API stand-in: the query each flag sends, the table and the --json
 * output. The API's own behaviour is tested in admin-api's alerts.routes.test.ts.
 */
let scratch: string;
let env: Record<string, string>;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "matoolkit-cli-alerts-"));
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

const alerts = [
  {
    id: 4,
    condition: "source-failing",
    severity: "critical",
    summary: "A runbook's data source failed several scheduler ticks in a row",
    subject: "runbook:hr-feed",
    runbookName: "hr-feed",
    batchId: null,
    details: { consecutiveFailures: 3 },
    raisedAt: "2030-06-01T12:02:00.000Z",
    resolvedAt: null,
  },
  {
    id: 3,
    condition: "dead-letters",
    severity: "critical",
    summary: "Messages were dead-lettered",
    subject: "subscription:orchestrator-events/orchestrator",
    runbookName: null,
    batchId: null,
    details: { deadLetters: 1 },
    raisedAt: "2030-06-01T12:00:00.000Z",
    resolvedAt: "2030-06-01T12:01:00.000Z",
  },
];

async function run(args: string[], body: unknown) {
  const urls: string[] = [];
  const bodies: unknown[] = [];
  let stdout = "";
  let stderr = "";
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    urls.push(String(input));
    if (typeof init?.body === "string") bodies.push(JSON.parse(init.body));
    return new Response(JSON.stringify(body), {
      status: 200,
      headers: { "content-type": "application/json" },
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
  return { code, stdout, stderr, urls, bodies };
}

describe("matoolkit alerts", () => {
  it("lists the open alerts as a table", async () => {
    const result = await run(["alerts"], [alerts[0]]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.urls).toEqual(["http://matoolkit.test/api/alerts?state=open"]);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+SEVERITY\s+CONDITION\s+SUBJECT\s+RAISED\s+SUMMARY$/);
    expect(lines[1]).toMatch(
      /^\s*4\s+critical\s+source-failing\s+runbook:hr-feed\s+2030-06-01T12:02:00.000Z\s+A runbook/,
    );
    expect(lines).toHaveLength(2);
  });

  it("--all asks for resolved ones too and shows when each was resolved; --limit is passed on", async () => {
    const result = await run(["alerts", "--all", "--limit", "5"], alerts);
    expect(result.urls).toEqual(["http://matoolkit.test/api/alerts?state=all&limit=5"]);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/RAISED\s+RESOLVED\s+SUMMARY$/);
    expect(lines[1]).toMatch(/2030-06-01T12:02:00.000Z\s+open\s+/);
    expect(lines[2]).toMatch(
      /2030-06-01T12:00:00.000Z\s+2030-06-01T12:01:00.000Z\s+Messages were dead-lettered$/,
    );
  });

  it("says so when nothing is open; --json prints the answer unchanged", async () => {
    expect((await run(["alerts"], [])).stdout).toBe("No open alerts.\n");
    const json = await run(["--json", "alerts", "--all"], alerts);
    expect(JSON.parse(json.stdout)).toEqual(alerts);
  });
});

describe("matoolkit webhook add --events", () => {
  it("takes the alert events (issue 31)", async () => {
    const created = {
      id: 1,
      url: "https://hooks.example.test/alerts",
      runbookName: null,
      events: ["alert.raised", "alert.resolved"],
      enabled: true,
      createdBy: "local-admin",
      createdAt: "2030-06-01T12:00:00.000Z",
      secret: "s3cret",
    };
    const result = await run(
      ["webhook", "add", "https://hooks.example.test/alerts", "--events", "alert.raised,alert.resolved"],
      created,
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.bodies).toEqual([
      { url: "https://hooks.example.test/alerts", events: ["alert.raised", "alert.resolved"] },
    ]);
  });
});
