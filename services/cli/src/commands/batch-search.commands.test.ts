import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrCreateLocalSigningKey } from "@matoolkit/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../run.ts";

/**
 * Issue 31 in the CLI, against an API stand-in: `batch list`'s new filters, `batch create
 * --external-ref`, and `member find <key>`: what each sends, what it prints, and the flags
 * refused before anything is sent (exit 2). The API's behaviour is admin-api's
 * batch-search.routes.test.ts.
 */
let scratch: string;
let env: Record<string, string>;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "matoolkit-cli-search-"));
  const dataDir = join(scratch, "data");
  await loadOrCreateLocalSigningKey(dataDir);
  env = {
    HOME: join(scratch, "home"),
    MATOOLKIT_CONFIG: join(scratch, "config.json"),
    MATOOLKIT_API_URL: "http://matoolkit.test/api",
    MATOOLKIT_DATA_DIR: dataDir,
  };
  writeFileSync(join(scratch, "members.csv"), "UserPrincipalName\nadele@contoso.test\n");
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

async function run(args: string[], body: unknown, status = 200) {
  const sent: { method: string; url: URL }[] = [];
  let stdout = "";
  let stderr = "";
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    sent.push({ method: init?.method ?? "GET", url: new URL(String(input)) });
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
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

const listed = {
  id: 7,
  runbookId: 1,
  runbookName: "contoso-pilot",
  runbookVersion: 2,
  status: "active",
  isManual: true,
  batchStartTime: null,
  detectedAt: "2030-01-10T00:00:00.000Z",
  initDispatchedAt: null,
  createdBy: "ada@contoso.test",
  currentPhase: null,
  externalRef: "CHG0042",
  outcome: null,
  succeededMembers: null,
  failedMembers: null,
  memberCounts: { active: 3, removed: 0, failed: 0 },
};

describe("matoolkit batch list filters", () => {
  it("sends createdBy, createdAfter, createdBefore and externalRef and shows the reference", async () => {
    const result = await run(
      [
        "batch",
        "list",
        "--created-by",
        "ada@contoso.test",
        "--created-after",
        "2030-01-01T00:00:00Z",
        "--created-before",
        "2030-02-01T00:00:00+01:00",
        "--external-ref",
        "CHG0042",
      ],
      [listed],
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const [request] = result.sent;
    expect(request?.url.pathname).toBe("/api/batches");
    expect(Object.fromEntries(request!.url.searchParams)).toEqual({
      createdBy: "ada@contoso.test",
      createdAfter: "2030-01-01T00:00:00Z",
      createdBefore: "2030-02-01T00:00:00+01:00",
      externalRef: "CHG0042",
    });
    const [header, row] = result.stdout.trimEnd().split("\n");
    expect(header).toMatch(/CREATED BY\s+REF$/);
    expect(row).toMatch(/ada@contoso\.test\s+CHG0042$/);
  });

  it("refuses a time without a time zone before sending anything (exit 2)", async () => {
    const result = await run(["batch", "list", "--created-after", "2030-01-01"], []);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--created-after.*must be an ISO 8601 timestamp with a time zone/);
    expect(result.sent).toEqual([]);
  });

  it("shows the reference in batch get", async () => {
    const result = await run(["batch", "get", "7"], { ...listed, phases: [] });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/External ref:\s+CHG0042/);
  });
});

describe("matoolkit batch create --external-ref", () => {
  it("sends the reference with the CSV", async () => {
    const created = { ...listed, memberCount: 1 };
    const result = await run(
      ["batch", "create", "contoso-pilot", "members.csv", "--external-ref", "CHG 7"],
      created,
      201,
    );
    expect(result.code).toBe(0);
    expect(result.sent[0]?.method).toBe("POST");
    expect(Object.fromEntries(result.sent[0]!.url.searchParams)).toEqual({
      runbook: "contoso-pilot",
      externalRef: "CHG 7",
    });
  });
});

describe("matoolkit member find", () => {
  const found = [
    {
      memberId: 31,
      memberKey: "adele@contoso.test",
      memberStatus: "active",
      addedAt: "2030-01-12T00:00:00.000Z",
      removedAt: null,
      failedAt: null,
      batchId: 9,
      batchStatus: "active",
      isManual: false,
      externalRef: null,
      batchCreatedAt: "2030-01-12T00:00:00.000Z",
      runbookName: "contoso-pilot",
      runbookVersion: 2,
    },
    {
      memberId: 12,
      memberKey: "Adele@Contoso.test",
      memberStatus: "removed",
      addedAt: "2030-01-10T00:00:00.000Z",
      removedAt: "2030-01-11T00:00:00.000Z",
      failedAt: null,
      erasedAt: "2030-03-01T00:00:00.000Z",
      batchId: 7,
      batchStatus: "completed",
      isManual: true,
      externalRef: "CHG0042",
      batchCreatedAt: "2030-01-10T00:00:00.000Z",
      runbookName: "contoso-pilot",
      runbookVersion: 1,
    },
  ];

  it("asks GET /api/members for the key, paged, and prints one row per batch", async () => {
    const result = await run(
      ["member", "find", "ADELE@contoso.test", "--limit", "2", "--offset", "4"],
      found,
    );
    expect(result.code).toBe(0);
    expect(result.sent[0]?.url.pathname).toBe("/api/members");
    expect(Object.fromEntries(result.sent[0]!.url.searchParams)).toEqual({
      key: "ADELE@contoso.test",
      limit: "2",
      offset: "4",
    });
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      /^\s*BATCH\s+RUNBOOK\s+BATCH STATUS\s+MEMBER\s+MEMBER STATUS\s+ADDED\s+REMOVED\s+ERASED\s+REF$/,
    );
    expect(lines[1]).toMatch(/^\s*9\s+contoso-pilot v2\s+active\s+31\s+active\s+2030-01-12/);
    expect(lines[2]).toMatch(
      /^\s*7\s+contoso-pilot v1\s+completed\s+12\s+removed\s+.*2030-03-01\S*\s+CHG0042$/,
    );
    expect(lines[3]).toBe("More: add --offset 6");
  });

  it("says so when the key is in no batch; --json prints the answer", async () => {
    expect((await run(["member", "find", "nobody@contoso.test"], [])).stdout).toBe("In no batch.\n");
    const json = await run(["--json", "member", "find", "adele@contoso.test"], found);
    expect(JSON.parse(json.stdout)).toEqual(found);
  });
});

describe("matoolkit member", () => {
  it("is one group holding both find and erase", async () => {
    const help = await run(["member", "--help"], []);
    expect(help.stdout).toMatch(/find \[options\] <key>/);
    expect(help.stdout).toMatch(/erase \[options\] <key>/);
  });
});
