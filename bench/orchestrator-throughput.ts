// Orchestrator benchmark (issue "Orchestrator", run on demand, not in CI):
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:orchestrator
// Options: BENCH_MEMBERS (default 10000), BENCH_STEPS (5), BENCH_RETRY_MEMBERS (500),
// BENCH_BUS_MESSAGES (5000), BENCH_WORKER_CONCURRENCY (32), BENCH_ORCHESTRATOR_CONCURRENCY (16),
// BENCH_RUNTIME (embedded | dapr: the Dapr adapters against the stand-in sidecar, broker and
// workflow task hub in this process, as the Dapr end-to-end tests run them).
// It creates its own database on the server, runs the orchestrator, the workflow host, a worker
// with a no-op function and the outbox relay in this process (embedded runtime), and prints figures.
import { performance } from "node:perf_hooks";
import pg from "pg";
import { notifyBatchChanged } from "@matoolkit/commands";
import { insertBatch, insertMembers, insertPhases, publishRunbook } from "@matoolkit/db";
import { parseRunbookOrThrow, topics } from "@matoolkit/domain";
import { startOrchestratorService } from "@matoolkit/orchestrator";
import { bootPlatform, platformConfigFromEnv } from "@matoolkit/platform";
import { declareWorkerPools, workerJobsSubscription } from "@matoolkit/runtime";
import { createFunctionRegistry, startWorkerService } from "@matoolkit/worker";
import { createStandInBroker, reserveFreePort, startStandInSidecar } from "@matoolkit/dapr-stand-in";
import { startTaskHubSidecarStandIn } from "@matoolkit/runtime/testing";
import { installSqlCounter, percentile } from "./sql-counter.ts";

const env = process.env;
const serverUrl = env.DATABASE_URL;
if (serverUrl === undefined) {
  process.stderr.write("Set DATABASE_URL to a PostgreSQL server (the benchmark creates its own database).\n");
  process.exit(2);
}
const members = Number(env.BENCH_MEMBERS ?? 10_000);
const stepsPerMember = Number(env.BENCH_STEPS ?? 5);
const retryMembers = Number(env.BENCH_RETRY_MEMBERS ?? 500);
const busMessages = Number(env.BENCH_BUS_MESSAGES ?? 5_000);
const workerConcurrency = Number(env.BENCH_WORKER_CONCURRENCY ?? 32);
const orchestratorConcurrency = Number(env.BENCH_ORCHESTRATOR_CONCURRENCY ?? 16);
const runtime = env.BENCH_RUNTIME ?? "embedded";
if (runtime !== "embedded" && runtime !== "dapr") {
  process.stderr.write(`BENCH_RUNTIME must be embedded or dapr, not ${runtime}\n`);
  process.exit(2);
}

const sql = installSqlCounter();
const database = `matoolkit_bench_${Date.now()}`;
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${database}`);
const url = new URL(serverUrl);
url.pathname = `/${database}`;

const dapr = runtime === "dapr" ? await startDaprStandIns() : undefined;
const platform = await bootPlatform(
  platformConfigFromEnv({
    DATABASE_URL: url.toString(),
    LOG_LEVEL: env.LOG_LEVEL ?? "warn",
    // A database of its own, created above: migrated here (no separate migrate step).
    MATOOLKIT_MIGRATE_ON_START: "true",
    ...dapr?.env,
  }),
  "bench",
);
const { db, bus } = platform;
const firstJobAt = new Map<number, number>();
const orchestrator = await startOrchestratorService({
  db,
  bus,
  logger: platform.logger,
  concurrency: orchestratorConcurrency,
  workflows: { engine: platform.workflows, recheckSeconds: 30, reconcileSeconds: 30 },
});
const flaky = new Set<number>();
/** When the worker function started and ended, per step execution: where a step's time goes. */
const functionTimes = new Map<number, { start: number; end: number }>();
const worker = await startWorkerService({
  bus,
  idempotency: platform.idempotency,
  logger: platform.logger,
  workerId: "worker-01",
  concurrency: workerConcurrency,
  jobTimeoutMs: 60_000,
  registry: createFunctionRegistry({
    "Bench-Noop": async (params, context) => {
      const batch = Number((params as { Batch?: unknown }).Batch);
      const now = Date.now();
      if (!firstJobAt.has(batch)) firstJobAt.set(batch, now);
      functionTimes.set(context.stepExecutionId, { start: now, end: Date.now() });
      return { complete: true };
    },
    "Bench-FailOnce": async (_params, context) => {
      if (!flaky.has(context.stepExecutionId)) {
        flaky.add(context.stepExecutionId);
        throw new Error("first attempt fails");
      }
      return { complete: true };
    },
  }),
});
// The raw-bus measurement's subscription, declared before start as Dapr requires (a sidecar
// reads the app's subscriptions once).
const rawBus = { received: 0, done: () => {} };
await bus.subscribe({ ...workerJobsSubscription("bench-raw"), concurrency: workerConcurrency }, async () => {
  rawBus.received += 1;
  if (rawBus.received === busMessages) rawBus.done();
});
// As the entry points do: deliveries open first, then the batch workflows start (Dapr ≤1.17
// holds workflow calls until the app port answers; see startOrchestratorService).
await platform.start();
await orchestrator.startWorkflows();

try {
  progress("measuring the raw bus");
  const bus1 = await measureRawBus();
  progress(`raw bus: ${bus1.messagesPerSecond.toFixed(0)} messages/s; running the batch and the retry batch`);
  // The retry batch runs WHILE the big batch runs: retry checks must not queue behind its backlog.
  const rss = sampleRss();
  const [run, retry] = await Promise.all([measureBatch(), measureRetryLag()]);
  const memory = rss.stop();
  progress(`batch done: ${run.stepsPerSecond.toFixed(0)} executions/s`);
  const ratio = run.stepsPerSecond / bus1.messagesPerSecond;
  const lines = [
    `runtime:                               ${runtime}${runtime === "dapr" ? " (stand-in sidecar and broker)" : ""}`,
    `members × steps:                       ${members} × ${stepsPerMember} = ${members * stepsPerMember}`,
    `member-step executions per second:     ${run.stepsPerSecond.toFixed(0)}  (${run.seconds.toFixed(1)} s end to end)`,
    `SQL statements per step execution:     ${run.statementsPerStep.toFixed(1)}`,
    `raw bus throughput (publish→ack):      ${bus1.messagesPerSecond.toFixed(0)} messages/s  (${busMessages} empty messages, publishMany ×500, ${bus1.statementsPerMessage.toFixed(2)} SQL/message)`,
    `executions / raw bus throughput:       ${ratio.toFixed(2)}`,
    `phase due_at → first published job:    ${run.dueLagMs.toFixed(0)} ms`,
    `retry due → dispatch (p50 / p99):      ${retry.p50.toFixed(0)} ms / ${retry.p99.toFixed(0)} ms  (${retry.samples} retries, during the batch)`,
    `dispatch commit → function start p50/p99: ${run.toWorker.p50} / ${run.toWorker.p99} ms  (outbox relay, bus, worker fetch and claim)`,
    `function end → step succeeded p50/p99:  ${run.toResult.p50} / ${run.toResult.p99} ms  (worker record + publish, bus, result transaction)`,
    `process RSS (start / peak / end):      ${memory.first} / ${memory.peak} / ${memory.last} MB  (all services in this process)`,
  ];
  process.stdout.write(`\n${lines.join("\n")}\n`);
} finally {
  await worker.stop();
  await orchestrator.stop();
  await platform.stop();
  await dapr?.close();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
}

/** The Dapr sidecar, broker and workflow task hub stand-ins, and the variables that point at them. */
async function startDaprStandIns() {
  const broker = createStandInBroker({ redeliveryDelayMs: 200, maxDeliveryAttempts: 50 });
  const taskHub = await startTaskHubSidecarStandIn();
  const appPort = await reserveFreePort();
  const sidecar = await startStandInSidecar({
    broker,
    appId: "matoolkit",
    appUrl: `http://127.0.0.1:${appPort}`,
    log: () => undefined,
  });
  return {
    env: {
      MATOOLKIT_RUNTIME: "dapr",
      DAPR_HTTP_ENDPOINT: sidecar.url,
      MATOOLKIT_DAPR_APP_PORT: String(appPort),
      DAPR_GRPC_PORT: String(taskHub.port),
    },
    async close() {
      await sidecar.stop();
      await taskHub.close();
      broker.close();
    },
  };
}

/** Resident memory sampled every 500 ms: flat means no growth with the work done. */
function sampleRss(): { stop(): { first: number; peak: number; last: number } } {
  const samples: number[] = [];
  const take = () => samples.push(Math.round(process.memoryUsage().rss / 1_048_576));
  take();
  const timer = setInterval(take, 500);
  return {
    stop() {
      clearInterval(timer);
      take();
      return { first: samples[0]!, peak: Math.max(...samples), last: samples[samples.length - 1]! };
    },
  };
}

/**
 * The bus alone, at its best with the batching the system uses: N empty messages published as the
 * outbox relay publishes (publishMany, 500 per call), consumed and acknowledged with the worker's
 * concurrency (completions group-committed as for every subscription).
 */
async function measureRawBus(): Promise<{ messagesPerSecond: number; statementsPerMessage: number }> {
  const finished = new Promise<void>((resolve) => (rawBus.done = resolve));
  sql.reset();
  const started = performance.now();
  for (let offset = 0; offset < busMessages; offset += 500) {
    await bus.publishMany(
      Array.from({ length: Math.min(500, busMessages - offset) }, (_, i) => ({
        id: `raw-${offset + i}`,
        topic: topics.workerJobs,
        // As a real job: Dapr routes on the body's WorkerId (see OutgoingMessage.properties).
        properties: { WorkerId: "bench-raw" },
        body: { WorkerId: "bench-raw" },
      })),
    );
  }
  await finished;
  return {
    messagesPerSecond: busMessages / ((performance.now() - started) / 1000),
    statementsPerMessage: sql.count() / busMessages,
  };
}

async function seedBatch(name: string, yaml: string, count: number, dueAt: Date): Promise<number> {
  const definition = parseRunbookOrThrow(yaml);
  const runbook = await publishRunbook(db, {
    name,
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
    for (let offset = 0; offset < count; offset += 1000) {
      const chunk = Array.from({ length: Math.min(1000, count - offset) }, (_, i) => ({
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

function runbookYaml(name: string, functionName: string, steps: number, retry: string): string {
  const stepLines = Array.from(
    { length: steps },
    (_, i) => `      - name: step-${i}
        worker_id: worker-01
        function: ${functionName}
        params:
          Batch: "{{_batch_id}}"
          Upn: "{{Upn}}"${retry}`,
  ).join("\n");
  return `name: ${name}
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time_column: StartsAt
phases:
  - name: go
    offset: T-0
    steps:
${stepLines}
`;
}

async function waitForBatchEnd(batchId: number): Promise<void> {
  let lastReport = Date.now();
  for (;;) {
    const row = await db
      .selectFrom("batches")
      .select("status")
      .where("id", "=", batchId)
      .executeTakeFirstOrThrow();
    if (row.status === "completed" || row.status === "failed") return;
    if (Date.now() - lastReport > 5_000) {
      lastReport = Date.now();
      const steps = await db
        .selectFrom("stepExecutions")
        .select(["status", (eb) => eb.fn.countAll<number>().as("n")])
        .where("batchId", "=", batchId)
        .groupBy("status")
        .execute();
      progress(
        `batch ${batchId} ${row.status}: ${steps.map((s) => `${s.status}=${s.n}`).join(" ") || "no steps yet"}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

function progress(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

async function measureBatch() {
  const dueAt = new Date(Date.now() + 3_000);
  const batchId = await seedBatch(
    "bench-throughput",
    runbookYaml("bench-throughput", "Bench-Noop", stepsPerMember, ""),
    members,
    dueAt,
  );
  sql.reset();
  const started = performance.now();
  await waitForBatchEnd(batchId);
  // The clock starts when the phase falls due, not at seeding.
  const seconds =
    (performance.now() - started) / 1000 -
    Math.max(0, (dueAt.getTime() - (Date.now() - (performance.now() - started))) / 1000);
  const executions = members * stepsPerMember;
  const statements = sql.count();
  const firstJob = firstJobAt.get(batchId) ?? Number.NaN;
  const timings = await db
    .selectFrom("stepExecutions")
    .select(["id", "dispatchedAt", "completedAt"])
    .where("batchId", "=", batchId)
    .execute();
  const toWorker: number[] = [];
  const toResult: number[] = [];
  for (const row of timings) {
    const times = functionTimes.get(row.id);
    if (times === undefined || row.dispatchedAt === null || row.completedAt === null) continue;
    toWorker.push(times.start - row.dispatchedAt.getTime());
    toResult.push(row.completedAt.getTime() - times.end);
  }
  const spread = (values: number[]) => ({ p50: percentile(values, 50), p99: percentile(values, 99) });
  return {
    toWorker: spread(toWorker),
    toResult: spread(toResult),
    seconds,
    stepsPerSecond: executions / seconds,
    statementsPerStep: statements / executions,
    dueLagMs: firstJob - dueAt.getTime(),
  };
}

async function measureRetryLag() {
  const retry = `
        retry:
          max_retries: 1
          interval: 2s`;
  const batchId = await seedBatch(
    "bench-retry",
    runbookYaml("bench-retry", "Bench-FailOnce", 1, retry),
    retryMembers,
    // Due a few seconds into the big batch, so its retries fall due while that batch runs.
    new Date(Date.now() + 8_000),
  );
  await waitForBatchEnd(batchId);
  const rows = await db
    .selectFrom("stepExecutions")
    .select(["retryAfter", "dispatchedAt"])
    .where("batchId", "=", batchId)
    .where("retryCount", "=", 1)
    .execute();
  const lags = rows.map((row) => row.dispatchedAt!.getTime() - row.retryAfter!.getTime());
  return { p50: percentile(lags, 50), p99: percentile(lags, 99), samples: lags.length };
}
