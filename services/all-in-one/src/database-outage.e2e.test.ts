import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { issueLocalToken } from "@matoolkit/admin-api";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { startAll, type RunningSystem } from "./start-all.ts";
import { eventually } from "../test/test-support.ts";

/**
 * Issue 11, outages, on a PostgreSQL server (DATABASE_URL): every connection of the system is cut,
 * again and again for a few seconds, while a manual batch runs in this process. That is what a
 * server restart looks like to its clients. The batch must complete with every step run and
 * succeeded exactly once, and the process must keep serving (/readyz back to 200).
 * Slow by nature (~45 s): a delivery whose settlement the cut swallowed comes back only once its
 * bus lock (30 s) expired and the next maintenance pass (10 s) ran.
 */
const MEMBERS = 8;
const STEPS = ["one", "two", "three"];
const OUTAGE_MS = 4_000;

let database: TestDatabase;
let dir: string;
let system: RunningSystem;
let admin: string;
let sideEffectLog: string;

beforeAll(async () => {
  database = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), "matoolkit-outage-e2e-"));
  const functionsDir = join(dir, "functions");
  const csvDir = join(dir, "csv");
  mkdirSync(functionsDir);
  mkdirSync(csvDir);
  sideEffectLog = join(dir, "side-effects.log");
  // The side-effect log is the ground truth: a line missing is a lost step, a line twice a duplicate.
  // Each step takes a moment, so the outage falls in the middle of the batch.
  writeFileSync(
    join(functionsDir, "record-step.mjs"),
    `import { appendFileSync } from "node:fs";
export default {
  "Record-Step": async (params) => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    appendFileSync(${JSON.stringify(sideEffectLog)}, params.Member + " " + params.Step + "\\n");
    return { complete: true, data: {} };
  },
};
`,
  );
  writeFileSync(join(csvDir, "members.csv"), membersCsv());
  system = await startAll({
    DATABASE_URL: database.url,
    MATOOLKIT_RUNTIME: "embedded",
    MATOOLKIT_DATA_DIR: join(dir, "data"),
    MATOOLKIT_FUNCTIONS_DIR: functionsDir,
    MATOOLKIT_CSV_DIR: csvDir,
    PORT: "0",
    LOG_LEVEL: "silent",
  });
  admin = await issueLocalToken({
    dataDir: join(dir, "data"),
    issuer: "matoolkit-local",
    audience: "api://matoolkit",
    roles: ["Admin"],
    name: "outage-e2e@example.test",
    ttlSeconds: 600,
  });
});

afterAll(async () => {
  await system?.stop();
  await database?.drop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const upns = Array.from({ length: MEMBERS }, (_, i) => `user${i + 1}@contoso.test`);

function membersCsv(): string {
  return ["Upn,MigrationDate", ...upns.map((upn) => `${upn},2030-01-01T09:00:00Z`)].join("\n") + "\n";
}

const runbookYaml = [
  "name: outage-e2e",
  "data_source:",
  "  type: csv",
  "  path: members.csv",
  "  primary_key: Upn",
  "  batch_time_column: MigrationDate",
  "retry:",
  "  max_retries: 3",
  "  interval: 1s",
  "phases:",
  "  - name: move",
  "    offset: T-0",
  "    steps:",
  ...STEPS.flatMap((step) => [
    `      - name: ${step}`,
    "        worker_id: worker-01",
    "        function: Record-Step",
    "        params:",
    '          Member: "{{Upn}}"',
    `          Step: ${step}`,
  ]),
  "",
].join("\n");

/** The API, tolerating the outage: a request that fails to connect reads as status 0. */
async function api(method: string, path: string, body?: string, type?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${admin}` };
  if (type !== undefined) headers["content-type"] = type;
  try {
    const response = await fetch(`${system.apiUrl}/api${path}`, { method, headers, body });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  } catch {
    return { status: 0, body: {} };
  }
}

function sideEffects(): string[] {
  if (!existsSync(sideEffectLog)) return [];
  return readFileSync(sideEffectLog, "utf8")
    .split("\n")
    .filter((line) => line !== "");
}

/**
 * What a server restart does to clients: every backend of the database terminated, repeatedly.
 * Returns how many were terminated, and how many steps had run when the first cut landed (the
 * batch goes on between cuts, as clients reconnect, so only that moment says "mid-batch").
 */
async function cutEveryConnection(forMs: number): Promise<{ terminated: number; doneAtFirstCut: number }> {
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  let terminated = 0;
  let doneAtFirstCut: number | undefined;
  try {
    const until = Date.now() + forMs;
    while (Date.now() < until) {
      const result = await admin.query<{ terminated: boolean }>(
        `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      terminated += result.rows.filter((row) => row.terminated).length;
      doneAtFirstCut ??= sideEffects().length;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await admin.end();
  }
  return { terminated, doneAtFirstCut: doneAtFirstCut ?? sideEffects().length };
}

it(
  "completes a batch with every step succeeded once while the database connections are cut, and keeps serving",
  { timeout: 120_000 },
  async () => {
    expect((await api("POST", "/runbooks", runbookYaml, "application/yaml")).status).toBe(201);
    const created = await api("POST", "/batches?runbook=outage-e2e", membersCsv(), "text/csv");
    expect(created.status).toBe(201);
    const batchId = Number(created.body.id);
    expect((await api("POST", `/batches/${batchId}/advance`)).body).toMatchObject({ action: "phase" });
    await eventually(
      async () => sideEffects().length,
      (count) => count > 0,
      "the first step to run",
    );

    const { terminated, doneAtFirstCut } = await cutEveryConnection(OUTAGE_MS);
    // The cut did hit the system (its pools, the bus, the workflow engine), mid-batch: steps were
    // left to run when it began. (Not "when it ended": the batch goes on between cuts.)
    expect(terminated).toBeGreaterThan(0);
    expect(doneAtFirstCut).toBeLessThan(MEMBERS * STEPS.length);

    await eventually(
      async () => String((await api("GET", `/batches/${batchId}`)).body.status),
      (status) => status === "completed" || status === "failed",
      "the batch to end",
    );
    const steps = await database.db
      .selectFrom("stepExecutions")
      .select(["status"])
      .where("batchId", "=", batchId)
      .execute();
    expect(steps).toHaveLength(MEMBERS * STEPS.length);
    expect(steps.every((step) => step.status === "succeeded")).toBe(true);
    expect((await api("GET", `/batches/${batchId}`)).body.status).toBe("completed");
    const expected = upns.flatMap((upn) => STEPS.map((step) => `${upn} ${step}`));
    expect(sideEffects().sort()).toEqual(expected.sort());

    const ready = await eventually(
      () =>
        fetch(`${system.apiUrl}/readyz`)
          .then((response) => response.status)
          .catch(() => 0),
      (status) => status === 200,
      "/readyz to answer 200",
    );
    expect(ready).toBe(200);
  },
);
