// Pacing benchmark (issue 30, run on demand, not in CI):
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:pacing
// A 2,000-member phase whose one step reads Microsoft Graph, on the embedded runtime (the
// orchestrator, the outbox relay and a worker in this process) against an in-process simulated
// tenant, with the worker paced: it prints the job starts of each second against the rate the
// worker allowed then and its cap, and fails (exit 1) if any one-second window held more starts
// than the cap. Midway, the simulated tenant answers a run of Graph requests 429 (a storm), so the
// run shows the rate halving and climbing back (AIMD, services/worker/src/pacing).
// Options: BENCH_MEMBERS (2000), BENCH_RATE (20 job starts per second, MATOOLKIT_RATE_LIMIT),
// BENCH_GRAPH_IN_FLIGHT (8), BENCH_WORKER_CONCURRENCY (16), BENCH_STORM (60 Graph requests
// answered 429 once a third of the members started; 0: none), BENCH_TIMEOUT_SECONDS (600).
// It creates its own database on the server and removes it, and everything it started, at the end.
import pg from "pg";
import { notifyBatchChanged } from "@matoolkit/commands";
import { insertBatch, insertMembers, insertPhases, publishRunbook } from "@matoolkit/db";
import { parseRunbookOrThrow } from "@matoolkit/domain";
import { startOrchestratorService } from "@matoolkit/orchestrator";
import { bootPlatform, platformConfigFromEnv } from "@matoolkit/platform";
import { declareWorkerPools } from "@matoolkit/runtime";
import { startSimulatedTenant } from "@matoolkit/simulated-tenant";
import {
  createFunctionRegistry,
  createTenantClients,
  startWorkerService,
  tenantConfigFromEnv,
  workerConfigFromEnv,
  pacingSettingsOf,
} from "@matoolkit/worker";
import { performance } from "node:perf_hooks";

const env = process.env;
const serverUrl = env.DATABASE_URL;
if (serverUrl === undefined) {
  process.stderr.write("Set DATABASE_URL to a PostgreSQL server (the benchmark creates its own database).\n");
  process.exit(2);
}
const members = Number(env.BENCH_MEMBERS ?? 2_000);
const storm = Number(env.BENCH_STORM ?? 60);
const timeoutMs = Number(env.BENCH_TIMEOUT_SECONDS ?? 600) * 1000;
// The worker's own configuration parser: the bench refuses what a worker would refuse.
const workerConfig = workerConfigFromEnv({
  MATOOLKIT_WORKER_CONCURRENCY: env.BENCH_WORKER_CONCURRENCY ?? "16",
  MATOOLKIT_RATE_LIMIT: env.BENCH_RATE ?? "20",
  MATOOLKIT_GRAPH_MAX_IN_FLIGHT: env.BENCH_GRAPH_IN_FLIGHT ?? "8",
});
const pacing = pacingSettingsOf(workerConfig);
const cap = pacing.jobStartsPerSecond!;

const closers: Array<{ what: string; close: () => Promise<unknown> }> = [];
const cleanUp = async () => {
  for (const { what, close } of closers.splice(0).reverse()) {
    await close().catch((error: unknown) => progress(`could not stop ${what}: ${String(error)}`));
  }
};
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    progress(`${signal}: stopping what the bench started`);
    void cleanUp().finally(() => process.exit(130));
  });
}

let failed = false;
try {
  failed = !(await run());
} catch (error) {
  failed = true;
  process.stderr.write(
    `[bench] FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
} finally {
  await cleanUp();
}
process.exit(failed ? 1 : 0);

/** Runs the phase and prints the figures; false if the cap was exceeded. */
async function run(): Promise<boolean> {
  const database = `matoolkit_bench_pacing_${Date.now()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  closers.push({ what: "the admin connection", close: () => admin.end() });
  await admin.query(`CREATE DATABASE ${database}`);
  closers.push({
    what: `database ${database}`,
    close: () => admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
  });
  const url = new URL(serverUrl!);
  url.pathname = `/${database}`;

  const simulator = await startSimulatedTenant();
  closers.push({ what: "the simulated tenant", close: () => simulator.close() });
  const platform = await bootPlatform(
    platformConfigFromEnv({
      DATABASE_URL: url.toString(),
      LOG_LEVEL: env.LOG_LEVEL ?? "warn",
      MATOOLKIT_MIGRATE_ON_START: "true",
    }),
    "bench",
  );
  closers.push({ what: "the platform", close: () => platform.stop() });
  const { db, bus } = platform;
  const orchestrator = await startOrchestratorService({
    db,
    bus,
    logger: platform.logger,
    concurrency: 16,
    workflows: { engine: platform.workflows, recheckSeconds: 30, reconcileSeconds: 30 },
  });
  closers.push({ what: "the orchestrator", close: () => orchestrator.stop() });
  // The real Graph and Exchange adapters, pointed at the simulator, as MATOOLKIT_TENANT=simulated does.
  const tenant = await createTenantClients(
    tenantConfigFromEnv({ MATOOLKIT_TENANT: "simulated", MATOOLKIT_SIMULATED_TENANT_URL: simulator.url }),
    { logger: platform.logger },
  );
  const starts: number[] = [];
  let stormArmed = false;
  const worker = await startWorkerService({
    bus,
    idempotency: platform.idempotency,
    logger: platform.logger,
    workerId: "worker-01",
    concurrency: workerConfig.concurrency,
    jobTimeoutMs: 120_000,
    tenant: tenant.clients,
    pacing,
    onJobStart: (at) => {
      starts.push(at);
      if (!stormArmed && storm > 0 && starts.length >= members / 3) {
        stormArmed = true;
        simulator.faults.arm({ api: "graph", count: storm, status: 429, retryAfterSeconds: 1 });
        progress(`storm: the next ${storm} Graph requests are answered 429 (Retry-After 1)`);
      }
    },
    registry: createFunctionRegistry({
      "Bench-GraphRead": async (_params, context) => {
        await context.tenant.graph.request(
          { method: "GET", path: "/users", query: { $top: "1", $select: "id" } },
          context.signal,
        );
        return { complete: true };
      },
    }),
  });
  closers.push({ what: "the worker", close: () => worker.stop() });
  await platform.start();
  await orchestrator.startWorkflows();

  // The allowed rate, read every 250 ms on the pacing's clock (the same clock as the starts).
  const rates: Array<{ at: number; current: number }> = [];
  const sampler = setInterval(() => {
    const rate = worker.pacing().startRate;
    if (rate !== null) rates.push({ at: performance.now(), current: rate.current });
  }, 250);
  closers.push({ what: "the rate sampler", close: async () => clearInterval(sampler) });

  progress(`${members} members, one Graph read each; worker paced at ${cap} job starts/s`);
  const batchId = await seedBatch(db, bus, new Date(Date.now() + 2_000));
  await waitForBatchEnd(db, batchId);
  clearInterval(sampler);
  const reading = worker.pacing();

  const first = starts[0] ?? 0;
  const seconds = Math.ceil(((starts.at(-1) ?? first) - first) / 1000) || 1;
  const perSecond = Array.from({ length: seconds + 1 }, () => 0);
  for (const at of starts) perSecond[Math.floor((at - first) / 1000)]! += 1;
  // Every one-second window opening at a start: the strict reading of "at most cap per second".
  let busiest = 0;
  for (let i = 0, j = 0; i < starts.length; i++) {
    while (j < starts.length && starts[j]! < starts[i]! + 1000) j++;
    busiest = Math.max(busiest, j - i);
  }
  const allowedAt = (second: number) => {
    const inSecond = rates.filter((r) => r.at >= first + second * 1000 && r.at < first + (second + 1) * 1000);
    return inSecond.length === 0 ? Number.NaN : Math.min(...inSecond.map((r) => r.current));
  };
  const lines = [
    `second  starts  allowed (lowest sampled)  cap`,
    ...perSecond.map(
      (count, second) =>
        `${String(second).padStart(6)}  ${String(count).padStart(6)}  ${allowedAt(second).toFixed(2).padStart(24)}  ${cap}`,
    ),
    "",
    `members / job starts:                  ${members} / ${starts.length}`,
    `observed job starts per second (mean): ${(starts.length / Math.max(1, (starts.at(-1)! - first) / 1000)).toFixed(2)}  (cap ${cap})`,
    `most starts in any one-second window:  ${busiest}  (${busiest <= cap ? "within" : "OVER"} the cap)`,
    `lowest allowed rate (after the storm): ${Math.min(...rates.map((r) => r.current)).toFixed(2)}  (floor ${Math.max(cap / 16, workerConfig.concurrency / 60).toFixed(2)})`,
    `Graph calls answered 429:              ${reading.apis.find((a) => a.api === "graph")?.throttledCalls ?? 0}`,
    `allowed rate at the end:               ${reading.startRate?.current.toFixed(2)} of ${cap}`,
  ];
  process.stdout.write(`\n${lines.join("\n")}\n`);
  return busiest <= Math.ceil(cap);
}

async function seedBatch(
  db: Parameters<typeof publishRunbook>[0],
  bus: Parameters<typeof declareWorkerPools>[0],
  dueAt: Date,
): Promise<number> {
  const yaml = `name: bench-pacing
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time_column: StartsAt
phases:
  - name: go
    offset: T-0
    steps:
      - name: read-user
        worker_id: worker-01
        function: Bench-GraphRead
        params:
          Upn: "{{Upn}}"
`;
  const definition = parseRunbookOrThrow(yaml);
  const runbook = await publishRunbook(db, {
    name: "bench-pacing",
    yamlContent: yaml,
    overdueBehavior: "rerun",
    rerunInit: false,
  });
  await declareWorkerPools(bus, ["worker-01"]);
  return db.transaction().execute(async (trx) => {
    const batch = await insertBatch(trx, {
      runbookId: runbook.id,
      batchStartTime: dueAt,
      isManual: false,
      createdBy: null,
    });
    for (let offset = 0; offset < members; offset += 1000) {
      const chunk = Array.from({ length: Math.min(1000, members - offset) }, (_, i) => ({
        memberKey: `user${offset + i}@contoso.test`,
        data: { Upn: `user${offset + i}@contoso.test` },
      }));
      await insertMembers(trx, batch.id, chunk);
    }
    await insertPhases(
      trx,
      batch.id,
      definition.phases.map((phase, sequence) => ({
        phaseName: phase.name,
        sequence,
        offsetMinutes: 0,
        dueAt,
        runbookVersion: runbook.version,
      })),
    );
    await notifyBatchChanged(trx, batch.id, "created");
    return batch.id;
  });
}

async function waitForBatchEnd(db: Parameters<typeof publishRunbook>[0], batchId: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastReport = Date.now();
  for (;;) {
    const row = await db
      .selectFrom("batches")
      .select("status")
      .where("id", "=", batchId)
      .executeTakeFirstOrThrow();
    if (row.status === "completed" || row.status === "failed") {
      if (row.status === "failed") throw new Error(`batch ${batchId} failed`);
      return;
    }
    if (Date.now() > deadline)
      throw new Error(`batch ${batchId} still ${row.status} after ${timeoutMs / 1000} s`);
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      progress(`batch ${batchId} ${row.status}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function progress(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}
