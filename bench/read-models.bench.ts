/**
 * Read-models benchmark (issue 17), run on demand, not in CI:
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:read-models
 * Options: BENCH_MEMBERS (default 10000), BENCH_STEPS (steps per member per phase, 5),
 * BENCH_PHASES (1), BENCH_OTHER_BATCHES (finished batches of the same size besides the one read,
 * 2: the tables hold other batches' rows, as a real database does), BENCH_READERS (8),
 * BENCH_SECONDS (per endpoint, 10), BENCH_VACUUM (1: VACUUM ANALYZE after seeding, what
 * autovacuum does to a finished batch's rows sooner or later; 0: ANALYZE only, as autovacuum's
 * analyze does soon after, to read them before the visibility map is set, so no scan is
 * index-only),
 * BENCH_BATCH_STATUS (completed; `active`: the same rows in a batch not marked ended, whose
 * member counts the API aggregates on every read instead of keeping them).
 *
 * It creates its own database on the server (dropped at the end), seeds finished batches with
 * set-based SQL (bench/read-models.seed.ts), starts the admin API in this process in local auth
 * mode, and has a second process (bench/read-load.ts) read each endpoint with BENCH_READERS
 * concurrent keep-alive readers. Target: p95 <= 50 ms for every endpoint.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import pg from "pg";
import { createVerifierForConfig, issueLocalToken, startAdminApiService } from "@matoolkit/admin-api";
import { createDataSourceClient } from "@matoolkit/datasources";
import { createDb, migrateToLatest } from "@matoolkit/db";
import { createLogger, type MessageBus } from "@matoolkit/runtime";
import { z } from "zod";
import { endpointFiguresSchema, type EndpointFigures, type LoadPlan } from "./read-load.plan.ts";
import { publishBenchRunbook, seedFinishedBatch, type SeedShape } from "./read-models.seed.ts";

const TARGET_P95_MS = 50;
const env = process.env;
const serverUrl = env.DATABASE_URL;
if (serverUrl === undefined) {
  process.stderr.write("Set DATABASE_URL to a PostgreSQL server (the benchmark creates its own database).\n");
  process.exit(2);
}
const batchStatus = z.enum(["completed", "active"]).parse(env.BENCH_BATCH_STATUS ?? "completed");
const shape: SeedShape = {
  members: Number(env.BENCH_MEMBERS ?? 10_000),
  steps: Number(env.BENCH_STEPS ?? 5),
  phases: Number(env.BENCH_PHASES ?? 1),
  batchStatus,
};
const otherBatches = Number(env.BENCH_OTHER_BATCHES ?? 2);
const readers = Number(env.BENCH_READERS ?? 8);
const seconds = Number(env.BENCH_SECONDS ?? 10);
const vacuum = (env.BENCH_VACUUM ?? "1") !== "0";

/**
 * The read routes never touch the bus; one that refuses every call (a Proxy, so it keeps up with
 * the port's methods) keeps pg-boss's polling out of the figures.
 */
const noBus = new Proxy({} as MessageBus, {
  get: (_bus, method) => {
    // Not a thenable: whatever resolves a promise with the bus must get the bus itself.
    if (method === "then") return undefined;
    if (method === "stop") return () => Promise.resolve();
    return () => Promise.reject(new Error("the read benchmark uses no bus"));
  },
});

const database = `matoolkit_readbench_${Date.now()}`;
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${database}`);
const url = new URL(serverUrl);
url.pathname = `/${database}`;
const db = createDb({ connectionString: url.toString(), applicationName: "matoolkit-readbench" });
const dataDir = await mkdtemp(path.join(tmpdir(), "matoolkit-readbench-"));

try {
  await migrateToLatest(db);
  const seedStarted = Date.now();
  const runbookId = await publishBenchRunbook(db, shape);
  // The batch read is the newest: its rows come after every other batch's, as an operator's
  // current batch does (and a plan walking the primary key would have to skip all of theirs).
  for (let other = 0; other < otherBatches; other += 1) {
    await seedFinishedBatch(db, runbookId, { ...shape, batchStatus: "completed" });
  }
  const read = await seedFinishedBatch(db, runbookId, shape);
  await vacuumAnalyze(url.toString(), vacuum);
  const deepEvent = await read.eventIdAt(0.9);
  const deepMember = await memberIdAt(read.batchId, 0.9);
  process.stdout.write(
    `Seeded ${1 + otherBatches} finished batch(es) of ${shape.members} members x ${shape.steps} steps x ` +
      `${shape.phases} phase(s) in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s; batch ` +
      `${read.batchId} read (${batchStatus}): ${read.steps} steps, ${read.events} events` +
      `, ${vacuum ? "vacuumed" : "analyzed, not vacuumed"}\n`,
  );

  const issuer = "matoolkit-local";
  const audience = "api://matoolkit";
  const logger = createLogger({ level: "silent", name: "readbench" });
  const api = await startAdminApiService({
    db,
    bus: noBus,
    verifier: await createVerifierForConfig({ mode: "local", dataDir, issuer, audience }),
    logger,
    dataSources: createDataSourceClient({ env: {}, baseDir: dataDir }),
    busReady: Promise.resolve(),
    host: "127.0.0.1",
    port: 0,
  });
  try {
    const token = await issueLocalToken({
      dataDir,
      issuer,
      audience,
      roles: ["Reader"],
      name: "readbench@example.test",
      ttlSeconds: 3600,
    });
    const batch = `/api/batches/${read.batchId}`;
    const deepStepOffset = Math.max(0, read.steps - 100);
    const plan: LoadPlan = {
      origin: api.url,
      token,
      readers,
      seconds,
      warmupSeconds: Math.min(2, seconds / 5),
      endpoints: [
        { name: "batch", path: batch },
        { name: "phases", path: `${batch}/phases` },
        { name: "members first page", path: `${batch}/members?limit=100` },
        { name: "members deep page", path: `${batch}/members?limit=100&afterId=${deepMember}` },
        { name: "steps first page", path: `${batch}/steps?limit=100` },
        { name: "steps deep page", path: `${batch}/steps?limit=100&offset=${deepStepOffset}` },
        { name: "events first page", path: `${batch}/events?limit=100` },
        { name: "events deep page", path: `${batch}/events?limit=100&afterId=${deepEvent}` },
      ],
    };
    printTable(await runLoad(plan));
  } finally {
    await api.close();
  }
} finally {
  await db.destroy();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
  await rm(dataDir, { recursive: true, force: true });
}

/** The id of the member at this fraction of the batch (in id order): a deep page's afterId. */
async function memberIdAt(batchId: number, fraction: number): Promise<number> {
  const { rows } = await sql<{ id: number }>`
    SELECT id FROM batch_members WHERE batch_id = ${batchId} ORDER BY id
    OFFSET floor(${fraction}::float8 * (SELECT count(*) FROM batch_members WHERE batch_id = ${batchId})) LIMIT 1
  `.execute(db);
  return rows[0]!.id;
}

async function vacuumAnalyze(connectionString: string, vacuum: boolean): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(vacuum ? "VACUUM (ANALYZE)" : "ANALYZE");
  } finally {
    await client.end();
  }
}

/** The load runs in a child process (see read-load.ts); it prints its figures as one JSON line. */
function runLoad(plan: LoadPlan): Promise<EndpointFigures[]> {
  const script = fileURLToPath(new URL("./read-load.ts", import.meta.url));
  const child = spawn(process.execPath, [...process.execArgv, script], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.stdin.end(JSON.stringify(plan));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`read-load exited with ${code}`));
      try {
        resolve(z.array(endpointFiguresSchema).parse(JSON.parse(output.trim().split("\n").pop() ?? "")));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

function printTable(figures: readonly EndpointFigures[]): void {
  const header = [
    "endpoint",
    "requests",
    "req/s",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "max ms",
    "bytes",
    "non-200",
    "p95 target",
  ];
  const rows = figures.map((f) => [
    f.name,
    String(f.requests),
    f.reqPerSec.toFixed(1),
    f.p50.toFixed(1),
    f.p95.toFixed(1),
    f.p99.toFixed(1),
    f.max.toFixed(1),
    String(f.bytes),
    String(f.errors),
    f.p95 <= TARGET_P95_MS && f.errors === 0 ? "met" : "MISSED",
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join("  ");
  process.stdout.write(
    `${readers} concurrent readers, ${seconds} s per endpoint, target p95 <= ${TARGET_P95_MS} ms\n`,
  );
  process.stdout.write(`${line(header)}\n`);
  for (const row of rows) process.stdout.write(`${line(row)}\n`);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
