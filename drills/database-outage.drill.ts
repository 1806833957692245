/**
 * Database outage: the whole system as a child process runs a manual batch (200 members × 3
 * steps by default); a quarter of the way through, PostgreSQL becomes unavailable for 30 s
 * (embedded: its server killed again and again; DATABASE_URL: the drill's database closed to
 * connections and every backend terminated, since the machine's server cannot be restarted).
 * Target: the batch completes, 0 lost, 0 duplicated, and /readyz says not-ready meanwhile.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { issueLocalToken } from "@matoolkit/admin-api";
import { startSystem } from "./support/system-process.ts";
import type { DrillContext, DrillOutcome } from "./drill.ts";
import { embeddedDrillDatabase, serverDrillDatabase, type DrillDatabase } from "./support/outage-database.ts";
import { countSideEffects, writeOutageFixture } from "./support/outage-fixture.ts";
import { freePort, watchReadiness } from "./support/outage-readiness.ts";

// A drill is an entry point (`npm run drill`): it reads its own settings.
// eslint-disable-next-line no-restricted-properties
const env = process.env;
const MEMBERS = Number(env.MATOOLKIT_DRILL_MEMBERS ?? 200);
const STEPS = 3;
const OUTAGE_MS = Number(env.MATOOLKIT_DRILL_OUTAGE_SECONDS ?? 30) * 1000;
const COMPLETION_TIMEOUT_MS = 300_000;

async function run({ log }: DrillContext): Promise<DrillOutcome> {
  const dir = mkdtempSync(path.join(tmpdir(), "matoolkit-drill-outage-"));
  chmodSync(dir, 0o755); // as root, the embedded server runs as `postgres` and must enter it
  const dataDir = path.join(dir, "data");
  const fixture = writeOutageFixture(dir, MEMBERS, STEPS);
  const serverUrl = env.DATABASE_URL;
  const database: DrillDatabase =
    serverUrl !== undefined && serverUrl !== ""
      ? await serverDrillDatabase(serverUrl)
      : embeddedDrillDatabase(dataDir, await freePort());
  const port = await freePort();
  log(`database: ${database.kind}; ${MEMBERS} members × ${STEPS} steps; outage ${OUTAGE_MS / 1000} s`);
  const system = await startSystem({
    port,
    logFile: path.join(dir, "system.log"),
    env: {
      ...database.env,
      PORT: String(port),
      MATOOLKIT_DATA_DIR: dataDir,
      MATOOLKIT_FUNCTIONS_DIR: fixture.functionsDir,
      MATOOLKIT_CSV_DIR: fixture.csvDir,
      LOG_LEVEL: "info",
    },
  });
  let keep = false;
  try {
    const token = await issueLocalToken({
      dataDir,
      issuer: "matoolkit-local",
      audience: "api://matoolkit",
      roles: ["Admin"],
      name: "outage-drill@example.test",
      ttlSeconds: 3600,
    });
    const api = async (method: string, route: string, body?: string, type?: string) => {
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      if (type !== undefined) headers["content-type"] = type;
      const response = await fetch(`${system.apiUrl}/api${route}`, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(10_000),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    expect201(await api("POST", "/runbooks", fixture.runbookYaml, "application/yaml"), "publish the runbook");
    const created = await api(
      "POST",
      `/batches?runbook=${fixture.runbookName}`,
      fixture.membersCsv,
      "text/csv",
    );
    expect201(created, "create the batch");
    const batchId = Number(created.body.id);
    // Without init steps the first advance starts the phase; with them, init then the phase.
    let advanced = await api("POST", `/batches/${batchId}/advance`);
    if (advanced.body.action === "init") {
      await until(
        async () => (await api("GET", `/batches/${batchId}`)).body.status === "active",
        120_000,
        "init",
      );
      advanced = await api("POST", `/batches/${batchId}/advance`);
    }
    if (advanced.body.action !== "phase")
      throw new Error(`advance answered ${advanced.status} ${JSON.stringify(advanced.body)}`);

    await until(
      async () => countSideEffects(fixture).executed >= fixture.expectedKeys.length / 4,
      120_000,
      "a quarter of the steps",
    );
    const readiness = watchReadiness(system.apiUrl);
    log(`outage starts after ${countSideEffects(fixture).executed} steps ran`);
    await database.outage(OUTAGE_MS);
    const back = Date.now();
    log("database back; waiting for the batch to end");
    let status = "";
    await until(
      async () => {
        status = String(
          (await api("GET", `/batches/${batchId}`).catch(() => ({ body: {} as Record<string, unknown> })))
            .body.status,
        );
        return status === "completed" || status === "failed";
      },
      COMPLETION_TIMEOUT_MS,
      "the batch to end",
    ).catch(() => undefined);
    const secondsToComplete = (Date.now() - back) / 1000;
    const notReadyMs = readiness.stop();
    const effects = countSideEffects(fixture);
    const succeeded = await succeededSteps(database.url, batchId);
    const figures = {
      "batch status": status,
      "steps succeeded": `${succeeded} of ${fixture.expectedKeys.length}`,
      lost: effects.lost,
      duplicated: effects.duplicated,
      "seconds from the database's return to completion": secondsToComplete.toFixed(1),
      "seconds /readyz was not ready": (notReadyMs / 1000).toFixed(1),
    };
    const passed =
      status === "completed" &&
      succeeded === fixture.expectedKeys.length &&
      effects.lost === 0 &&
      effects.duplicated === 0 &&
      notReadyMs > 0;
    if (!passed) {
      log(`target missed; the system's log and side effects are kept in ${dir}`);
      keep = true;
    }
    return { passed, figures };
  } catch (error) {
    log(`failed; the system's log is kept in ${dir}/system.log`);
    keep = true;
    throw error;
  } finally {
    await system.stop();
    await database.dispose();
    // The server stops on its own once the system is gone (its lifeline): give it a moment.
    if (!keep) await until(() => (rmSync(dir, { recursive: true, force: true }), true), 30_000, "cleanup");
  }
}

async function succeededSteps(url: string, batchId: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(
      "SELECT count(*) AS n FROM step_executions WHERE batch_id = $1 AND status = 'succeeded'",
      [batchId],
    );
    return Number(result.rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

function expect201(response: { status: number; body: unknown }, what: string): void {
  if (response.status !== 201)
    throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
}

async function until(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // The API may not answer during the outage; keep asking.
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

export const description =
  "PostgreSQL unavailable for 30 s mid-batch: 0 lost, 0 duplicated, not-ready meanwhile";
export { run };
