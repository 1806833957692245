// Peer of bench:orchestrator (issue 29): the same chained work on a plain PostgreSQL job queue,
// graphile-worker (pinned devDependency), on the same server, so the two compare in one run.
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:peer
// BENCH_MEMBERS (10000) members each run BENCH_STEPS (5) steps in order: a job per step, which in
// ONE transaction records the step's status row and enqueues the member's next step
// (`graphile_worker.add_job`), BENCH_WORKER_CONCURRENCY (32) jobs at once. Timed from the moment
// every member's first job is enqueued to the last step's commit. Prints steps/s, SQL statements
// and WAL bytes per step; BENCH_PEER_RESULT_FILE=<file> also writes them as JSON (what
// orchestrator-throughput.ts reads when it runs this after itself). Creates its own database on
// the server and drops it at the end, also on failure or a signal.
import { performance } from "node:perf_hooks";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import pg from "pg";
import { Logger, run, type Runner, type Task } from "graphile-worker";
import { installSqlCounter } from "../sql-counter.ts";
import { startWalMeasurement } from "../wal-meter.ts";

/** What this writes to BENCH_PEER_RESULT_FILE. */
export interface PeerResult {
  readonly peer: string;
  readonly members: number;
  readonly steps: number;
  readonly concurrency: number;
  readonly seconds: number;
  readonly stepsPerSecond: number;
  readonly sqlPerStep: number;
  readonly walBytesPerStep: number;
  readonly walRecordsPerStep: number;
}

const env = process.env;
const serverUrl = env.DATABASE_URL;
if (serverUrl === undefined) {
  process.stderr.write("Set DATABASE_URL to a PostgreSQL server (the peer creates its own database).\n");
  process.exit(2);
}
const members = positiveInteger("BENCH_MEMBERS", 10_000);
const steps = positiveInteger("BENCH_STEPS", 5);
const concurrency = positiveInteger("BENCH_WORKER_CONCURRENCY", 32);
const timeoutMs = positiveInteger("BENCH_TIMEOUT_SECONDS", 600) * 1000;
const version = (
  JSON.parse(
    readFileSync(createRequire(import.meta.url).resolve("graphile-worker/package.json"), "utf8"),
  ) as {
    version: string;
  }
).version;

const sql = installSqlCounter();
const database = `matoolkit_peer_${Date.now()}`;
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${database}`);
const url = new URL(serverUrl);
url.pathname = `/${database}`;

// Our own pool, ended (awaited) before the database is dropped: graphile-worker ends a pool it
// made without waiting for it, and a connection still open when DROP DATABASE … WITH (FORCE)
// terminates it raised an 'error' event after its handlers were gone, killing this process.
// With listeners on 'error' and 'connect', graphile-worker uses the pool as given
// (node_modules/graphile-worker/dist/lib.js, assertPool).
// 10 connections: graphile-worker's own default (`maxPoolSize`, dist/config.js), as when it makes the pool.
const pool = new pg.Pool({ connectionString: url.toString(), max: 10 });
const onPoolError = (error: Error) => process.stderr.write(`[peer] pool: ${error.message}\n`);
pool.on("error", onPoolError);
pool.on("connect", (client) => client.on("error", onPoolError));
let runner: Runner | undefined;
const cleanUp = async () => {
  await runner?.stop().catch(() => undefined);
  await pool.end().catch(() => undefined);
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
};
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
}

let exitCode = 0;
try {
  const result = await measure();
  const lines = [
    `peer:                                  graphile-worker ${version}, concurrency ${concurrency}`,
    `members × steps:                       ${members} × ${steps} = ${members * steps}`,
    `chained steps per second:              ${result.stepsPerSecond.toFixed(0)}  (${result.seconds.toFixed(1)} s end to end)`,
    `SQL statements per step:               ${result.sqlPerStep.toFixed(1)}`,
    `WAL per step:                          ${result.walBytesPerStep.toFixed(0)} bytes, ${result.walRecordsPerStep.toFixed(1)} records`,
  ];
  process.stdout.write(`\n${lines.join("\n")}\n`);
  if (env.BENCH_PEER_RESULT_FILE !== undefined)
    writeFileSync(env.BENCH_PEER_RESULT_FILE, JSON.stringify(result));
} catch (error) {
  exitCode = 1;
  process.stderr.write(
    `[peer] FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
} finally {
  await cleanUp();
}
process.exit(exitCode);

async function measure(): Promise<PeerResult> {
  const setup = new pg.Client({ connectionString: url.toString() });
  await setup.connect();
  // The step's status row, as bench:orchestrator's step_executions row is (a far narrower one).
  await setup.query(`CREATE TABLE member_steps (
    member integer NOT NULL, step integer NOT NULL, status text NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (member, step))`);

  let done = 0;
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const step: Task = async (payload, helpers) => {
    const { member, index } = payload as { member: number; index: number };
    await helpers.withPgClient(async (client) => {
      await client.query("BEGIN");
      try {
        await client.query(
          "INSERT INTO member_steps (member, step, status) VALUES ($1, $2, 'succeeded') ON CONFLICT DO NOTHING",
          [member, index],
        );
        if (index + 1 < steps) {
          await client.query(
            "SELECT graphile_worker.add_job('step', json_build_object('member', $1::int, 'index', $2::int))",
            [member, index + 1],
          );
        }
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw error;
      }
    });
    done += 1;
    if (done === members * steps) finish();
  };
  runner = await run({
    pgPool: pool,
    concurrency,
    noHandleSignals: true,
    // Jobs are announced by its NOTIFY trigger; the poll is the safety net only.
    pollInterval: 1000,
    logger: new Logger(() => (level, message) => {
      if (String(level) === "error") process.stderr.write(`[peer] graphile-worker: ${message}\n`);
    }),
    taskList: { step },
  });

  const wal = await startWalMeasurement(admin, url.toString(), (line) =>
    process.stderr.write(`[peer] ${line}\n`),
  );
  sql.reset();
  const started = performance.now();
  await setup.query(
    "SELECT graphile_worker.add_job('step', json_build_object('member', m, 'index', 0)) FROM generate_series(1, $1) AS m",
    [members],
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    finished,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${done} of ${members * steps} steps after ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  const seconds = (performance.now() - started) / 1000;
  const statements = sql.count();
  const walUse = await wal.stop();
  await wal.release();
  await setup.end();
  const executions = members * steps;
  return {
    peer: `graphile-worker ${version}`,
    members,
    steps,
    concurrency,
    seconds,
    stepsPerSecond: executions / seconds,
    sqlPerStep: statements / executions,
    walBytesPerStep: walUse.bytes / executions,
    walRecordsPerStep: walUse.records / executions,
  };
}

function positiveInteger(name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    process.stderr.write(`${name} must be a positive integer, not ${JSON.stringify(raw)}\n`);
    process.exit(2);
  }
  return value;
}
