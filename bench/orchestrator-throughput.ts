// Orchestrator benchmark (issue "Orchestrator", run on demand, not in CI):
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:orchestrator
// Options: BENCH_MEMBERS (default 10000), BENCH_STEPS (5), BENCH_RETRY_MEMBERS (500),
// BENCH_POLL_MEMBERS (0: members of a third batch, run beside the big one, whose step answers
// {complete: false} twice, polled every second, as a mailbox move is; their figures are in the
// per-step ones, and their lateness is printed),
// BENCH_BUS_MESSAGES (5000), BENCH_WORKER_CONCURRENCY (32), BENCH_ORCHESTRATOR_CONCURRENCY (16),
// BENCH_TIMEOUT_SECONDS (600: how long the raw bus or a batch may take before the run fails),
// BENCH_PHASE_START_WINDOW (the orchestrator's default, 250: a phase's steps out with workers
// before its next members wait; a number above BENCH_MEMBERS starts every member at once),
// BENCH_RUNTIME:
//   embedded  the embedded runtime (PostgreSQL bus, timers, workflow engine) in this process.
//   dapr      every port on REAL Dapr (bench/real-dapr.ts): daprd, placement and scheduler of the
//             pinned release MATOOLKIT_DAPR_VERSION (default newest; `npm run dapr:install`
//             builds them), a redis-server the bench starts, components/local + dapr/resources as
//             shipped with only the Redis host changed, dapr/config.yaml. The bus is Redis Streams
//             through daprd, timers the Jobs API on the real Scheduler, idempotency the Redis
//             state store, the batch workflows Dapr Workflow (actors on the real placement).
//   both      embedded, then dapr, with the same parameters, each in a process of its own, and a
//             side-by-side table of the figures (bench/dapr-vs-embedded.ts).
// OTEL_*: OpenTelemetry's variables reach the platform (OTEL_SDK_DISABLED=true: telemetry off;
// bench/telemetry-cost.ts compares off with on).
// BENCH_KEEP_LOGS=<dir>: copy the Dapr daemons' logs (and the workflow SDK's console) there.
// BENCH_DAPR_CONFIG=<file>: an experiment, daprd's Configuration instead of dapr/config.yaml.
// BENCH_DAPR_TRACING=shipped: daprd traces as its Configuration says; unset, daprd records spans only
// when the app does (samplingRate "0" without an OTLP endpoint), as embedded records none.
// BENCH_SQL_BREAKDOWN=1: also print the statements behind SQL/step, most frequent first (stderr).
// BENCH_WAL_BREAKDOWN=1: also print the WAL per step by table and index, with its record types
// (stderr; reads every WAL record of the run with pg_walinspect: slow on 10,000 members).
// BENCH_PEER: graphile-worker (default) runs bench/peers/graphile-worker-chain.ts after the
// batch, in a process of its own once everything this run started is stopped, with the same
// members, steps and worker concurrency on the same server, and prints executions / peer steps;
// none skips it.
// It creates its own database on the server, runs the orchestrator, the workflow host, a worker
// with a no-op function and the outbox relay in this process, prints figures, and stops and
// removes everything it started (daemons, their data, the database), also on failure or a signal.
import { performance } from "node:perf_hooks";
import pg from "pg";
import { notifyBatchChanged } from "@matoolkit/commands";
import { insertBatch, insertMembers, insertPhases, publishRunbook } from "@matoolkit/db";
import { parseRunbookOrThrow, topics } from "@matoolkit/domain";
import { DEFAULT_PHASE_START_WINDOW, startOrchestratorService } from "@matoolkit/orchestrator";
import { bootPlatform, platformConfigFromEnv } from "@matoolkit/platform";
import {
  declareWorkerPools,
  otlpTracesProtocol,
  otlpTracesUrl,
  workerJobsSubscription,
} from "@matoolkit/runtime";
import { createFunctionRegistry, startWorkerService } from "@matoolkit/worker";
import { writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { sampleEventLoop } from "./event-loop-meter.ts";
import { samplePostgresCpu } from "./postgres-cpu.ts";
import { cpuSeconds, divertConsoleNarration, rssMb, startRealDapr, type RealDapr } from "./real-dapr.ts";
import { installSidecarCounter } from "./sidecar-counter.ts";
import { installSqlCounter, percentile } from "./sql-counter.ts";
import { runPeer, type PeerResult } from "./peers/run-peer.ts";
import { startWalMeasurement, type WalRelationUse, type WalUse } from "./wal-meter.ts";

const env = process.env;
const runtime = env.BENCH_RUNTIME ?? "embedded";
if (runtime === "both") {
  const { compareRuntimes } = await import("./dapr-vs-embedded.ts");
  process.exit(await compareRuntimes(import.meta.filename, env));
}
if (runtime !== "embedded" && runtime !== "dapr") {
  process.stderr.write(`BENCH_RUNTIME must be embedded, dapr or both, not ${runtime}\n`);
  process.exit(2);
}
const serverUrl = env.DATABASE_URL;
if (serverUrl === undefined) {
  process.stderr.write("Set DATABASE_URL to a PostgreSQL server (the benchmark creates its own database).\n");
  process.exit(2);
}
/** A whole-number setting of at least `min`; anything else ends the run with the setting's name. */
const countFromEnv = (name: string, fallback: number, min: number): number => {
  const raw = env[name];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min) {
    process.stderr.write(`${name} must be a whole number of at least ${min}, not ${raw}\n`);
    process.exit(2);
  }
  return value;
};
const members = countFromEnv("BENCH_MEMBERS", 10_000, 1);
const stepsPerMember = countFromEnv("BENCH_STEPS", 5, 1);
const retryMembers = countFromEnv("BENCH_RETRY_MEMBERS", 500, 0);
const pollMembers = countFromEnv("BENCH_POLL_MEMBERS", 0, 0);
/** Bench-PollTwice answers {complete: false} this many times, then completes. */
const POLLS_PENDING = 2;
/** The raw bus is the yardstick of "executions / raw bus": at least one message. */
const busMessages = countFromEnv("BENCH_BUS_MESSAGES", 5_000, 1);
const workerConcurrency = countFromEnv("BENCH_WORKER_CONCURRENCY", 32, 1);
const orchestratorConcurrency = countFromEnv("BENCH_ORCHESTRATOR_CONCURRENCY", 16, 1);
const phaseStartWindow =
  env.BENCH_PHASE_START_WINDOW === undefined ? undefined : countFromEnv("BENCH_PHASE_START_WINDOW", 0, 1);
const timeoutMs = countFromEnv("BENCH_TIMEOUT_SECONDS", 600, 1) * 1000;
const keepLogs = env.BENCH_KEEP_LOGS;
const peer = env.BENCH_PEER ?? "graphile-worker";
if (peer !== "graphile-worker" && peer !== "none") {
  process.stderr.write(`BENCH_PEER must be graphile-worker or none, not ${peer}\n`);
  process.exit(2);
}
const cores = availableParallelism();

/** What was started, stopped in reverse order at the end, on failure or on SIGINT/SIGTERM. */
const closers: Array<{ what: string; close: () => Promise<unknown> }> = [];
let cleaning: Promise<void> | undefined;
let interrupted = false;
const cleanUp = () =>
  (cleaning ??= (async () => {
    for (const { what, close } of closers.reverse()) {
      await close().catch((error: unknown) => progress(`could not stop ${what}: ${String(error)}`));
    }
  })());
/** A start-up step: if it fails, what was started before it is stopped before the error ends the run. */
const guarded = <T>(step: Promise<T>): Promise<T> =>
  step.catch(async (error: unknown) => {
    await cleanUp();
    throw error;
  });
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    interrupted = true;
    progress(`${signal}: stopping what the bench started`);
    void cleanUp().finally(() => process.exit(130));
  });
}

const sql = installSqlCounter();
const database = `matoolkit_bench_${Date.now()}`;
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
closers.push({ what: "the admin connection", close: () => admin.end() });
await admin.query(`CREATE DATABASE ${database}`);
closers.push({
  what: `database ${database}`,
  close: async () => {
    // pg-boss's stop returns before its pool has closed: let the connections go (up to 5 s)
    // rather than FORCE them closed under it (it would log each as an error).
    for (let waited = 0; waited < 5_000; waited += 100) {
      const open = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [
        database,
      ]);
      if ((open.rows[0] as { n: number }).n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  },
});
const url = new URL(serverUrl);
url.pathname = `/${database}`;

/** OpenTelemetry's variables as given (bench/telemetry-cost.ts turns telemetry off and on). */
const otelEnv = Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith("OTEL_")));
let dapr: RealDapr | undefined;
let narration: ReturnType<typeof divertConsoleNarration> | undefined;
/** On Dapr: the app's HTTP calls to its sidecar (what SQL statements are to the embedded runtime). */
let sidecar: ReturnType<typeof installSidecarCounter> | undefined;
if (runtime === "dapr") {
  progress(
    `starting real Dapr ${env.MATOOLKIT_DAPR_VERSION ?? "newest"}: placement, scheduler, redis-server, daprd`,
  );
  narration = divertConsoleNarration();
  // What the platform will make of OpenTelemetry's variables (parsed again below, with Dapr's):
  // daprd records spans only if the app does (real-dapr.ts, daprTracingOf).
  const telemetry = platformConfigFromEnv({ DATABASE_URL: url.toString(), ...otelEnv }).telemetry;
  const appRecordsSpans = !telemetry.sdkDisabled && otlpTracesUrl(telemetry) !== undefined;
  dapr = await guarded(startRealDapr(env, { appRecordsSpans }));
  const started = dapr;
  closers.push({
    what: "daprd, redis-server, scheduler and placement",
    close: async () => {
      if (keepLogs !== undefined) {
        started.keepLogs(keepLogs);
        narration?.writeTo(join(keepLogs, "app-console.log"));
        progress(`Dapr logs copied to ${keepLogs}`);
      }
      await started.close();
    },
  });
  sidecar = installSidecarCounter(dapr.env.DAPR_HTTP_ENDPOINT!);
  progress(`Dapr ${dapr.version} up: ${dapr.daemons.map((d) => `${d.role} pid ${d.pid}`).join(", ")}`);
}
const platformConfig = platformConfigFromEnv({
  DATABASE_URL: url.toString(),
  LOG_LEVEL: env.LOG_LEVEL ?? "warn",
  // A database of its own, created above: migrated here (no separate migrate step).
  MATOOLKIT_MIGRATE_ON_START: "true",
  ...otelEnv,
  ...dapr?.env,
});
/** What the platform makes of those variables (the sampler is read by the SDK itself). */
const telemetryState = platformConfig.telemetry.sdkDisabled
  ? "off (OTEL_SDK_DISABLED)"
  : otlpTracesUrl(platformConfig.telemetry) === undefined
    ? "on, trace context and lag metrics only (no OTLP endpoint: no spans recorded)"
    : `on, spans exported over OTLP ${otlpTracesProtocol(platformConfig.telemetry)}${env.OTEL_TRACES_SAMPLER === undefined ? "" : ` (sampler ${env.OTEL_TRACES_SAMPLER} ${env.OTEL_TRACES_SAMPLER_ARG ?? ""})`}`;
const platform = await guarded(bootPlatform(platformConfig, "bench"));
closers.push({ what: "the platform", close: () => platform.stop() });
const { db, bus } = platform;
const firstJobAt = new Map<number, number>();
const orchestrator = await guarded(
  startOrchestratorService({
    db,
    bus,
    logger: platform.logger,
    concurrency: orchestratorConcurrency,
    ...(phaseStartWindow === undefined ? {} : { phaseStartWindow }),
    workflows: { engine: platform.workflows, recheckSeconds: 30, reconcileSeconds: 30 },
  }),
);
closers.push({ what: "the orchestrator", close: () => orchestrator.stop() });
const flaky = new Set<number>();
/** When the worker function started and ended, per step execution: where a step's time goes. */
const functionTimes = new Map<number, { start: number; end: number }>();
/** Each polling step's calls (Bench-PollTwice): when each started and ended. */
const pollCalls = new Map<number, { start: number; end: number }[]>();
const worker = await guarded(
  startWorkerService({
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
      "Bench-PollTwice": async (_params, context) => {
        const start = Date.now();
        const calls = pollCalls.get(context.stepExecutionId) ?? [];
        pollCalls.set(context.stepExecutionId, [...calls, { start, end: Date.now() }]);
        return { complete: calls.length >= POLLS_PENDING, data: {} };
      },
    }),
  }),
);
closers.push({ what: "the worker", close: () => worker.stop() });
// The raw-bus measurement's subscription, declared before start as Dapr requires (a sidecar
// reads the app's subscriptions once).
const rawBus = { received: 0, done: () => {} };
await guarded(
  bus.subscribe({ ...workerJobsSubscription("bench-raw"), concurrency: workerConcurrency }, async () => {
    rawBus.received += 1;
    if (rawBus.received === busMessages) rawBus.done();
  }),
);
// As the entry points do: deliveries open first, then the batch workflows start (Dapr ≤1.17
// holds workflow calls until the app port answers; see startOrchestratorService).
await guarded(platform.start());
await guarded(orchestrator.startWorkflows());

let failed = false;
/** The figures, printed once the peer has run too (it runs after everything here has stopped). */
let lines: string[] = [];
let result: Record<string, unknown> = {};
try {
  progress("measuring the raw bus");
  const bus1 = await measureRawBus();
  progress(`raw bus: ${bus1.messagesPerSecond.toFixed(0)} messages/s; running the batch and the retry batch`);
  // The retry batch runs WHILE the big batch runs: retry checks must not queue behind its backlog.
  const rss = sampleRss();
  // The CPU figures cover both batches: the retry batch may end after the big one.
  const cpu = sampleCpu();
  const eventLoop = sampleEventLoop();
  const serverCpu = await samplePostgresCpu(admin);
  const [run, retry, poll] = await Promise.all([measureBatch(), measureRetryLag(), measurePollLag()]);
  const loop = eventLoop.stop();
  const memory = rss.stop();
  const { used: processCpu, seconds: sampledSeconds } = cpu.stop();
  const cpuUsed = [
    ...processCpu,
    ...(serverCpu === undefined ? [] : [{ role: "PostgreSQL server", seconds: serverCpu.stop() }]),
  ];
  progress(`batch done: ${run.stepsPerSecond.toFixed(0)} executions/s`);
  const ratio = run.stepsPerSecond / bus1.messagesPerSecond;
  const cpuLine = cpuUsed.map(({ role, seconds }) => `${role} ${seconds.toFixed(1)}`).join(", ");
  const daemonRss = memory.daemons.map(({ role, peak }) => `${role} ${peak}`).join(", ");
  lines = [
    `runtime:                               ${runtime}${dapr === undefined ? "" : ` (real daprd ${dapr.version}, placement, scheduler; components/local on redis-server; ${dapr.config})`}`,
    `members × steps:                       ${members} × ${stepsPerMember} = ${members * stepsPerMember}`,
    `telemetry:                             ${telemetryState}`,
    `phase start window:                    ${phaseStartWindow ?? `${DEFAULT_PHASE_START_WINDOW} (default)`} steps out with workers per phase`,
    `member-step executions per second:     ${run.stepsPerSecond.toFixed(0)}  (${run.seconds.toFixed(1)} s end to end)`,
    `SQL statements per step execution:     ${run.statementsPerStep.toFixed(1)}  (each one round trip)`,
    `WAL per step execution:                ${walLine(run.wal, members * stepsPerMember)}`,
    ...(sidecar === undefined
      ? []
      : [
          `sidecar HTTP calls per step execution: ${run.sidecarCallsPerStep.toFixed(1)}  (${run.sidecarKinds.map(({ kind, perStep }) => `${kind} ${perStep.toFixed(2)}`).join(", ")})`,
        ]),
    `raw bus throughput (publish→ack):      ${bus1.messagesPerSecond.toFixed(0)} messages/s  (${busMessages} empty messages, publishMany ×500, ${bus1.statementsPerMessage.toFixed(2)} SQL/message${sidecar === undefined ? "" : `, ${bus1.sidecarCallsPerMessage.toFixed(2)} sidecar calls/message`})`,
    `executions / raw bus throughput:       ${ratio.toFixed(2)}`,
    `phase due_at → first published job:    ${run.dueLagMs.toFixed(0)} ms`,
    retry === undefined
      ? "retry due → dispatch:                  not measured (BENCH_RETRY_MEMBERS=0)"
      : `retry due → dispatch (p50 / p99):      ${retry.p50.toFixed(0)} ms / ${retry.p99.toFixed(0)} ms  (${retry.samples} retries, during the batch)`,
    ...(poll === undefined
      ? []
      : [
          `poll answer + interval → next poll's start (p50 / p99): ${poll.p50.toFixed(0)} ms / ${poll.p99.toFixed(0)} ms  (${poll.samples} polls of ${pollMembers} members, during the batch)`,
        ]),
    `dispatch commit → function start p50/p99: ${run.toWorker.p50} / ${run.toWorker.p99} ms  (outbox relay, bus, worker fetch and claim)`,
    `function end → step succeeded p50/p99:  ${run.toResult.p50} / ${run.toResult.p99} ms  (worker record + publish, bus, result transaction)`,
    `process RSS (start / peak / end):      ${memory.first} / ${memory.peak} / ${memory.last} MB  (all services in this process)`,
    ...(memory.daemons.length === 0 ? [] : [`Dapr daemons' RSS peak:                ${daemonRss} MB`]),
    `CPU seconds during the batches:        ${cpuLine}  (${cores} cores × ${sampledSeconds.toFixed(1)} s of both batches = ${(cores * sampledSeconds).toFixed(0)} s available)`,
    `main thread during the batches:        busy ${(loop.busy * 100).toFixed(0)} %, event loop delay mean / p99 ${loop.delayMeanMs.toFixed(1)} / ${loop.delayP99Ms.toFixed(1)} ms  (each statement's answer waits that long for its caller)`,
  ];
  const problems = dapr?.problems().filter((p) => p.count > 0) ?? [];
  for (const { role, count, sample } of problems) {
    progress(`${role} logged ${count} warnings/errors, e.g.:\n    ${sample.join("\n    ")}`);
  }
  if (narration !== undefined) progress(`workflow SDK console lines (diverted): ${narration.lines()}`);
  result = {
    runtime,
    telemetry: telemetryState,
    daprVersion: dapr?.version,
    members,
    steps: stepsPerMember,
    executionsPerSecond: run.stepsPerSecond,
    seconds: run.seconds,
    sqlPerStep: run.statementsPerStep,
    walBytesPerStep: run.wal.bytes / (members * stepsPerMember),
    walRecordsPerStep: run.wal.records / (members * stepsPerMember),
    rawBusPerSecond: bus1.messagesPerSecond,
    rawBusSqlPerMessage: bus1.statementsPerMessage,
    rawBusSidecarCallsPerMessage: sidecar === undefined ? undefined : bus1.sidecarCallsPerMessage,
    sidecarCallsPerStep: sidecar === undefined ? undefined : run.sidecarCallsPerStep,
    sidecarKinds: run.sidecarKinds,
    ratio,
    dueLagMs: run.dueLagMs,
    retry,
    poll,
    toWorker: run.toWorker,
    toResult: run.toResult,
    rss: { first: memory.first, peak: memory.peak, last: memory.last },
    mainThread: loop,
    daemonRss: memory.daemons,
    cpu: cpuUsed,
    daemonProblems: problems.map(({ role, count }) => ({ role, count })),
  };
} catch (error) {
  failed = true;
  // Interrupted, the measurement fails because its services were stopped under it: nothing to add.
  if (!interrupted) {
    const reason = error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(`[bench] FAILED: ${reason}\n`);
    for (const { role, count, sample } of dapr?.problems().filter((p) => p.count > 0) ?? []) {
      progress(`${role} logged ${count} warnings/errors, e.g.:\n    ${sample.join("\n    ")}`);
    }
  }
} finally {
  await cleanUp();
}
if (!failed) {
  if (peer === "graphile-worker" && !interrupted) {
    progress(
      `running the peer, graphile-worker, on the same server: ${members} × ${stepsPerMember} chained steps`,
    );
    const outcome = await runPeer(env, { members, steps: stepsPerMember, concurrency: workerConcurrency });
    lines.push(...peerLines(outcome, Number(result.executionsPerSecond)));
    result.peer = outcome.ok ? outcome.result : { failed: outcome.why };
  }
  process.stdout.write(`\n${lines.join("\n")}\n`);
  if (env.BENCH_RESULT_FILE !== undefined) writeFileSync(env.BENCH_RESULT_FILE, JSON.stringify(result));
}
process.exit(failed ? 1 : 0);

function walLine(wal: WalUse, executions: number): string {
  const fpi = Number.isFinite(wal.fpiBytes)
    ? `, ${((100 * wal.fpiBytes) / wal.bytes).toFixed(0)} % full-page images`
    : "";
  return `${(wal.bytes / executions).toFixed(0)} bytes, ${(wal.records / executions).toFixed(1)} records  (whole server${fpi}; records: ${wal.source})`;
}

function peerLines(outcome: Awaited<ReturnType<typeof runPeer>>, executionsPerSecond: number): string[] {
  if (!outcome.ok) return [`peer:                                  ${outcome.why}`];
  const peerResult: PeerResult = outcome.result;
  return [
    `peer, same run and server:             ${peerResult.peer}, ${peerResult.members} × ${peerResult.steps} chained steps, concurrency ${peerResult.concurrency}`,
    `peer steps per second:                 ${peerResult.stepsPerSecond.toFixed(0)}  (${peerResult.seconds.toFixed(1)} s; ${peerResult.sqlPerStep.toFixed(1)} SQL/step, WAL ${peerResult.walBytesPerStep.toFixed(0)} bytes / ${peerResult.walRecordsPerStep.toFixed(1)} records per step)`,
    `executions / peer steps:               ${(executionsPerSecond / peerResult.stepsPerSecond).toFixed(2)}`,
  ];
}

function printWalBreakdown(relations: readonly WalRelationUse[], executions: number): void {
  for (const { relation, records, bytes, types } of relations.slice(0, 40)) {
    const kinds = types
      .slice(0, 6)
      .map(({ type, count }) => `${type} ${(count / executions).toFixed(2)}`)
      .join(", ");
    console.error(
      `${(bytes / executions).toFixed(0).padStart(6)} B/step ${(records / executions).toFixed(2).padStart(6)} rec/step  ${relation}  (${kinds})`,
    );
  }
}

/**
 * Resident memory sampled every 500 ms: flat means no growth with the work done. On Dapr, each
 * daemon's too (they are processes of their own).
 */
function sampleRss(): {
  stop(): { first: number; peak: number; last: number; daemons: Array<{ role: string; peak: number }> };
} {
  const samples: number[] = [];
  const daemonPeaks = new Map<string, number>();
  const take = () => {
    samples.push(Math.round(process.memoryUsage().rss / 1_048_576));
    for (const { role, pid } of dapr?.daemons ?? []) {
      const now = rssMb(pid);
      if (Number.isFinite(now)) daemonPeaks.set(role, Math.max(daemonPeaks.get(role) ?? 0, now));
    }
  };
  take();
  const timer = setInterval(take, 500);
  return {
    stop() {
      clearInterval(timer);
      take();
      return {
        first: samples[0]!,
        peak: Math.max(...samples),
        last: samples[samples.length - 1]!,
        daemons: [...daemonPeaks].map(([role, peak]) => ({ role, peak })),
      };
    },
  };
}

/** CPU seconds used from now to stop(), by this process and by each Dapr daemon, and over how long. */
function sampleCpu(): {
  stop(): { used: Array<{ role: string; seconds: number }>; seconds: number };
} {
  const since = performance.now();
  const own = process.cpuUsage();
  // The services' event loop alone (Node ≥ 23.9); the process's figure counts every thread (GC,
  // libuv's pool) too.
  const loop = process.threadCpuUsage();
  const daemons = (dapr?.daemons ?? []).map(({ role, pid }) => ({ role, pid, before: cpuSeconds(pid) }));
  return {
    stop() {
      const used = process.cpuUsage(own);
      const loopUsed = process.threadCpuUsage(loop);
      return {
        used: [
          { role: "bench process", seconds: (used.user + used.system) / 1e6 },
          { role: "its main thread", seconds: (loopUsed.user + loopUsed.system) / 1e6 },
          ...daemons.map(({ role, pid, before }) => ({ role, seconds: cpuSeconds(pid) - before })),
        ],
        seconds: (performance.now() - since) / 1000,
      };
    },
  };
}

/**
 * The bus alone, at its best with the batching the system uses: N empty messages published as the
 * outbox relay publishes (publishMany, 500 per call), consumed and acknowledged with the worker's
 * concurrency (completions group-committed as for every subscription).
 */
async function measureRawBus(): Promise<{
  messagesPerSecond: number;
  statementsPerMessage: number;
  sidecarCallsPerMessage: number;
}> {
  const finished = new Promise<void>((resolve) => (rawBus.done = resolve));
  sql.reset();
  sidecar?.reset();
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
  await withTimeout(finished, () => `raw bus: ${rawBus.received} of ${busMessages} messages delivered`);
  return {
    messagesPerSecond: busMessages / ((performance.now() - started) / 1000),
    statementsPerMessage: sql.count() / busMessages,
    sidecarCallsPerMessage: (sidecar?.count() ?? Number.NaN) / busMessages,
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

function runbookYaml(name: string, functionName: string, steps: number, options: string): string {
  const stepLines = Array.from(
    { length: steps },
    (_, i) => `      - name: step-${i}
        worker_id: worker-01
        function: ${functionName}
        params:
          Batch: "{{_batch_id}}"
          Upn: "{{Upn}}"${options}`,
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
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await db
      .selectFrom("batches")
      .select("status")
      .where("id", "=", batchId)
      .executeTakeFirstOrThrow();
    if (row.status === "completed" || row.status === "failed") return;
    if (Date.now() > deadline) {
      const steps = await stepCounts(batchId);
      throw new Error(`batch ${batchId} still ${row.status} after ${timeoutMs / 1000} s: ${steps}`);
    }
    if (Date.now() - lastReport > 5_000) {
      lastReport = Date.now();
      progress(`batch ${batchId} ${row.status}: ${await stepCounts(batchId)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function stepCounts(batchId: number): Promise<string> {
  const steps = await db
    .selectFrom("stepExecutions")
    .select(["status", (eb) => eb.fn.countAll<number>().as("n")])
    .where("batchId", "=", batchId)
    .groupBy("status")
    .execute();
  return steps.map((s) => `${s.status}=${s.n}`).join(" ") || "no steps yet";
}

/** `promise`, or an error saying what was still missing after BENCH_TIMEOUT_SECONDS. */
async function withTimeout<T>(promise: Promise<T>, missing: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${missing()} after ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
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
  const wal = await startWalMeasurement(admin, url.toString(), progress);
  sql.reset();
  sidecar?.reset();
  const started = performance.now();
  await waitForBatchEnd(batchId);
  // The clock starts when the phase falls due, not at seeding.
  const seconds =
    (performance.now() - started) / 1000 -
    Math.max(0, (dueAt.getTime() - (Date.now() - (performance.now() - started))) / 1000);
  const executions = members * stepsPerMember;
  const statements = sql.count();
  // After the count: the meter's own statements are not the system's.
  const walUse = await wal.stop();
  if (env.BENCH_WAL_BREAKDOWN === "1") printWalBreakdown(await wal.byRelation(), executions);
  await wal.release();
  // BENCH_SQL_BREAKDOWN=1: which statements make up SQL/step (to explain a change in it), with the
  // time callers waited on each: a stage whose statements add up to the run's length is the one
  // the others wait for (one result transaction at a time, say).
  if (env.BENCH_SQL_BREAKDOWN === "1")
    for (const { statement, count, ms } of sql.byStatement().slice(0, 30))
      console.error(
        `${(count / executions).toFixed(3)}/step ${((ms * 1000) / executions).toFixed(0).padStart(5)} µs/step  ${statement}`,
      );
  const sidecarCalls = sidecar?.count() ?? Number.NaN;
  const sidecarKinds = (sidecar?.byKind() ?? []).map(({ kind, calls }) => ({
    kind,
    perStep: calls / executions,
  }));
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
    wal: walUse,
    sidecarCallsPerStep: sidecarCalls / executions,
    sidecarKinds,
    dueLagMs: firstJob - dueAt.getTime(),
  };
}

/**
 * The poll batch (BENCH_POLL_MEMBERS): each step polled every second until its third call
 * completes. Lateness of a poll: from the previous call's end plus the interval to this call's
 * start, so it holds the result's way back, the poll check's and the poll job's.
 */
async function measurePollLag() {
  if (pollMembers === 0) return undefined;
  const poll = `
        poll:
          interval: 1s
          timeout: 1m`;
  const batchId = await seedBatch(
    "bench-poll",
    runbookYaml("bench-poll", "Bench-PollTwice", 1, poll),
    pollMembers,
    new Date(Date.now() + 8_000),
  );
  await waitForBatchEnd(batchId);
  const lags: number[] = [];
  for (const calls of pollCalls.values()) {
    for (let i = 1; i < calls.length; i += 1) lags.push(calls[i]!.start - (calls[i - 1]!.end + 1000));
  }
  return { p50: percentile(lags, 50), p99: percentile(lags, 99), samples: lags.length };
}

async function measureRetryLag() {
  if (retryMembers === 0) return undefined;
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
