// `npm start` benchmark (issue 17, run on demand, not in CI):
//   npm run bench:start        (or `npx tsx bench/npm-start.bench.ts`; no DATABASE_URL needed)
// Options: BENCH_MEMBERS (default 10000), BENCH_STEPS (5), BENCH_WORKER_CONCURRENCY (32, as
// bench:orchestrator), BENCH_ORCHESTRATOR_CONCURRENCY (unset: npm start's default),
// BENCH_POLL_SECONDS (2), BENCH_TIMEOUT_SECONDS (1800).
// It runs the real entry point as a user does: `npm start` as a child process on a fresh data
// directory (embedded PostgreSQL), then drives one manual batch of BENCH_MEMBERS × BENCH_STEPS
// Test-Echo steps through the public admin API only (local token, as the CLI signs it), and
// prints executions/s and the peak memory of the whole process tree. Compare the figure with
// `npm run bench:orchestrator` (the same batch, all services in one process, on the server).
import { spawn } from "node:child_process";
import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { issueLocalToken, localAuthConfigSchema } from "@matoolkit/auth";
import { freePort } from "../drills/support/outage-readiness.ts";
import {
  descendantsOf,
  isRunning,
  processGroups,
  refOf,
  sampleProcessTree,
  type ProcessGroup,
  type TreeMemory,
  type TreeSampler,
} from "./process-tree-memory.ts";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RUNBOOK = "bench-npm-start";
/** npm start stops the services, then PostgreSQL; past this the tree is killed. */
const STOP_GRACE_MS = 60_000;

const settings = z
  .object({
    BENCH_MEMBERS: z.coerce.number().int().min(1).default(10_000),
    BENCH_STEPS: z.coerce.number().int().min(1).max(100).default(5),
    BENCH_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(32),
    BENCH_ORCHESTRATOR_CONCURRENCY: z.coerce.number().int().min(1).max(256).optional(),
    BENCH_TIMEOUT_SECONDS: z.coerce.number().int().min(10).default(1800),
    // As `matoolkit batch watch` (2 s): GET /api/batches/{id} counts every member's steps, so
    // polling it much faster takes a visible share of the machine from the batch it measures.
    BENCH_POLL_SECONDS: z.coerce.number().min(0.2).max(60).default(2),
  })
  .parse(
    Object.fromEntries(
      Object.entries(process.env).filter(([name, value]) => name.startsWith("BENCH_") && value?.trim()),
    ),
  );
const members = settings.BENCH_MEMBERS;
const stepsPerMember = settings.BENCH_STEPS;
const POLL_MS = settings.BENCH_POLL_SECONDS * 1000;

const workDir = mkdtempSync(path.join(tmpdir(), "matoolkit-bench-start-"));
chmodSync(workDir, 0o755); // as root, the embedded server runs as `postgres` and must enter it
const dataDir = path.join(workDir, "data");
const logFile = path.join(workDir, "npm-start.log");
let system: StartedSystem | undefined;
let cleaning: Promise<void> | undefined;
/** Stops npm start and removes the temporary directory, once, whatever called it first. */
const cleanup = (): Promise<void> =>
  (cleaning ??= (async () => {
    try {
      if (system !== undefined) await system.stop();
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  })());
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
] as const) {
  // `on`, not `once`: Ctrl-C reaches this process twice (from the terminal and relayed by tsx's
  // launcher), and a second signal with no listener would kill it before the cleanup is done.
  process.on(signal, () => {
    if (cleaning !== undefined) return;
    progress(`${signal}: stopping npm start and removing ${workDir}`);
    void cleanup().finally(() => process.exit(code));
  });
}

async function main(): Promise<void> {
  const apiPort = await freePort();
  const pgPort = await freePort();
  const childEnv: Record<string, string> = {
    MATOOLKIT_DATA_DIR: dataDir,
    MATOOLKIT_EMBEDDED_PG_PORT: String(pgPort),
    PORT: String(apiPort),
    LOG_LEVEL: "warn",
    MATOOLKIT_WORKER_CONCURRENCY: String(settings.BENCH_WORKER_CONCURRENCY),
    ...(settings.BENCH_ORCHESTRATOR_CONCURRENCY === undefined
      ? {}
      : { MATOOLKIT_ORCHESTRATOR_CONCURRENCY: String(settings.BENCH_ORCHESTRATOR_CONCURRENCY) }),
  };
  const load = loadavg();
  const lines = [
    `npm start (embedded PostgreSQL), data dir ${dataDir}`,
    ...Object.entries(childEnv).map(([name, value]) => `  ${name}=${value}`),
    ...(settings.BENCH_ORCHESTRATOR_CONCURRENCY === undefined
      ? ["  MATOOLKIT_ORCHESTRATOR_CONCURRENCY unset (npm start's default)"]
      : []),
    `batch: ${members} members × ${stepsPerMember} Test-Echo steps in one phase`,
    `load average at start: ${load.map((l) => l.toFixed(2)).join(" ")} (${availableParallelism()} CPUs)`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);

  const spawnedAt = performance.now();
  system = startNpmStart(childEnv);
  await waitForReady(system, `http://127.0.0.1:${apiPort}`, 180_000);
  const readySeconds = (performance.now() - spawnedAt) / 1000;
  progress(`ready after ${readySeconds.toFixed(1)} s`);

  const api = await adminApi(`http://127.0.0.1:${apiPort}/api`);
  await api.send("POST", "/runbooks", runbookYaml(), "application/yaml");
  const createStarted = performance.now();
  const created = createdBatch.parse(
    await api.send("POST", `/batches?runbook=${RUNBOOK}`, membersCsv(), "text/csv"),
  );
  const createSeconds = (performance.now() - createStarted) / 1000;
  progress(
    `batch ${created.id} created with ${created.memberCount} members in ${createSeconds.toFixed(1)} s`,
  );
  if (created.memberCount !== members) throw new Error(`the batch has ${created.memberCount} members`);

  const phaseSentAt = await advanceToPhase(api, created.id);
  const end = await waitForEnd(api, created.id, phaseSentAt);
  const seconds = (end.seenAt - phaseSentAt) / 1000;
  const phase = phaseRows.parse(await api.send("GET", `/batches/${created.id}/phases`))[0];
  const memory = system.sampler.stop();
  const executions = members * stepsPerMember;
  const serverSeconds =
    phase?.dispatchedAt && phase.completedAt
      ? (Date.parse(phase.completedAt) - Date.parse(phase.dispatchedAt)) / 1000
      : Number.NaN;
  const succeeded = phase?.memberCounts.succeeded ?? 0;

  const endLoad = loadavg();
  const figures = [
    `members × steps:                     ${members} × ${stepsPerMember} = ${executions}`,
    `batch outcome:                       ${end.status}; ${succeeded}/${members} members succeeded the phase`,
    `member-step executions per second:   ${(executions / seconds).toFixed(0)}  (${seconds.toFixed(1)} s)`,
    `  clock: from sending POST /api/batches/${created.id}/advance (the phase's) to the first`,
    `  GET /api/batches/${created.id} answering ${end.status} (polled every ${POLL_MS} ms)`,
    `server's phase dispatchedAt → completedAt: ${serverSeconds.toFixed(1)} s = ${(executions / serverSeconds).toFixed(0)} executions/s`,
    `npm start → /readyz 200:             ${readySeconds.toFixed(1)} s`,
    `POST /api/batches (CSV of ${members}):   ${createSeconds.toFixed(1)} s`,
    `GET /api/batches/{id} while running: mean ${end.pollMean.toFixed(0)} ms, max ${end.pollMax.toFixed(0)} ms (${end.polls} polls)`,
    ...memoryLines(memory),
    `npm start's log at warn or above:    ${logProblems(logFile)}`,
    `load average at end: ${endLoad.map((l) => l.toFixed(2)).join(" ")} (${availableParallelism()} CPUs; shared machine)`,
  ];
  process.stdout.write(`\n${figures.join("\n")}\n`);
  if (end.status !== "completed" || succeeded !== members) process.exitCode = 1;
}

// --- npm start as a child process -------------------------------------------------------------

interface StartedSystem {
  readonly pid: number;
  readonly sampler: TreeSampler;
  readonly exited: Promise<void>;
  hasExited(): boolean;
  /** SIGINT to its process group, as Ctrl-C in a terminal; waits for every process it started. */
  stop(): Promise<void>;
}

function startNpmStart(childEnv: Record<string, string>): StartedSystem {
  const log = openSync(logFile, "a");
  // Its own process group, like a terminal's foreground job: Ctrl-C here does not reach it, and
  // stop() signals the whole group as a terminal would.
  const child = spawn("npm", ["start"], {
    cwd: repoRoot,
    env: { ...inheritedEnv(), ...childEnv },
    detached: true,
    stdio: ["ignore", log, log],
  });
  closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error("could not spawn npm start");
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true;
      resolve();
    }),
  );
  const sampler = sampleProcessTree(pid);
  return {
    pid,
    sampler,
    exited: exitedPromise,
    hasExited: () => exited,
    async stop() {
      const stopStarted = performance.now();
      // npm returns at once on SIGINT while the system shuts down: wait for every process seen in
      // the tree (PostgreSQL runs in a session of its own and stops last), not only for npm.
      const tracked = [
        ...new Map(
          [...sampler.seen(), ...descendantsOf(pid).flatMap((p) => refOf(p) ?? [])].map((ref) => [
            `${ref.pid}/${ref.startTicks}`,
            ref,
          ]),
        ).values(),
      ];
      sampler.stop();
      signalGroup(pid, "SIGINT");
      const deadline = Date.now() + STOP_GRACE_MS;
      while (tracked.some(isRunning) && Date.now() < deadline) await sleep(200);
      const left = tracked.filter(isRunning);
      if (left.length > 0) {
        const pids = [...new Set(left.map((ref) => ref.pid))];
        progress(`still running ${STOP_GRACE_MS / 1000} s after SIGINT: killing pids ${pids.join(" ")}`);
        signalGroup(pid, "SIGKILL");
        for (const other of pids) signal(other, "SIGKILL");
      }
      if (!exited) await exitedPromise;
      const stopped = ((performance.now() - stopStarted) / 1000).toFixed(1);
      progress(
        left.length > 0
          ? `npm start killed after ${stopped} s`
          : `npm start stopped ${stopped} s after SIGINT (all ${tracked.length} processes of its tree gone)`,
      );
    },
  };
}

/** The user's environment minus anything that would take npm start off its embedded defaults. */
function inheritedEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined &&
        !/^(MATOOLKIT_|DAPR_|APP_API_TOKEN$|DATABASE_URL$|PORT$|LOG_LEVEL$|AZURE_AD_)/.test(entry[0]),
    ),
  );
}

async function waitForReady(started: StartedSystem, baseUrl: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (started.hasExited()) throw new Error("npm start exited before it was ready");
    try {
      const response = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`npm start was not ready after ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

function signalGroup(pid: number, name: NodeJS.Signals): void {
  signal(-pid, name);
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

// --- the admin API, as a user drives it -------------------------------------------------------

interface AdminApi {
  /** The parsed JSON answer; a status ≥ 400 throws with the route, status and problem body. */
  send(method: string, route: string, body?: string, contentType?: string): Promise<unknown>;
}

/** Admin token signed with the server's local key, as `npm run token` and the CLI do. */
async function adminApi(apiUrl: string): Promise<AdminApi> {
  const auth = localAuthConfigSchema.parse({ mode: "local", dataDir });
  const token = await issueLocalToken({
    dataDir: auth.dataDir,
    issuer: auth.issuer,
    audience: auth.audience,
    roles: ["Admin"],
    name: "local-admin",
    ttlSeconds: settings.BENCH_TIMEOUT_SECONDS + 600,
  });
  return {
    async send(method, route, body, contentType) {
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      if (contentType !== undefined) headers["content-type"] = contentType;
      const response = await fetch(`${apiUrl}${route}`, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(120_000),
      });
      const text = await response.text();
      if (response.status >= 400) {
        throw new Error(`${method} /api${route}: HTTP ${response.status} ${text.slice(0, 500)}`);
      }
      return text === "" ? undefined : (JSON.parse(text) as unknown);
    },
  };
}

const createdBatch = z.object({ id: z.number(), memberCount: z.number() });
const advanceAnswer = z.object({ action: z.enum(["init", "phase"]) });
const phaseCounts = z.object({
  succeeded: z.number(),
  failed: z.number(),
  cancelled: z.number(),
  running: z.number(),
});
const batchDetail = z.object({
  status: z.string(),
  phases: z.array(z.object({ status: z.string(), memberCounts: phaseCounts })),
});
const phaseRows = z.array(
  z.object({
    dispatchedAt: z.string().nullable(),
    completedAt: z.string().nullable(),
    memberCounts: phaseCounts,
  }),
);

/**
 * Advances until the phase is dispatched (the init steps first, when the runbook has any:
 * advancing while they run answers 409, so it retries). Returns when the phase's request was sent.
 */
async function advanceToPhase(api: AdminApi, batchId: number): Promise<number> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const sentAt = performance.now();
    try {
      const answer = advanceAnswer.parse(await api.send("POST", `/batches/${batchId}/advance`));
      if (answer.action === "phase") return sentAt;
      progress("init steps dispatched");
    } catch (error) {
      if (!String(error).includes("HTTP 409") || Date.now() > deadline) throw error;
    }
    await sleep(500);
  }
}

async function waitForEnd(api: AdminApi, batchId: number, since: number) {
  const deadline = since + settings.BENCH_TIMEOUT_SECONDS * 1000;
  const durations: number[] = [];
  let lastReport = performance.now();
  for (;;) {
    const asked = performance.now();
    const batch = batchDetail.parse(await api.send("GET", `/batches/${batchId}`));
    const answeredAt = performance.now();
    durations.push(answeredAt - asked);
    if (batch.status === "completed" || batch.status === "failed" || batch.status === "cancelled") {
      return {
        status: batch.status,
        // The batch had ended by the time the request was answered; that is the clock's end.
        seenAt: answeredAt,
        polls: durations.length,
        pollMean: durations.reduce((a, b) => a + b, 0) / durations.length,
        pollMax: Math.max(...durations),
      };
    }
    if (answeredAt > deadline) throw new Error(`batch ${batchId} still ${batch.status} at the timeout`);
    if (answeredAt - lastReport > 5_000) {
      lastReport = answeredAt;
      const counts = batch.phases[0]?.memberCounts;
      progress(
        `${((answeredAt - since) / 1000).toFixed(0)} s: batch ${batch.status}, phase ` +
          `${batch.phases[0]?.status ?? "?"} ${counts ? `${counts.succeeded} succeeded, ${counts.running} running` : ""}`,
      );
    }
    await sleep(Math.max(0, POLL_MS - (performance.now() - asked)));
  }
}

// --- inputs and output ------------------------------------------------------------------------

/** One phase of no-op steps on the default worker's Test-Echo (no tenant needed). */
function runbookYaml(): string {
  const steps = Array.from(
    { length: stepsPerMember },
    (_, i) => `      - name: step-${i}
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"`,
  ).join("\n");
  return `name: ${RUNBOOK}
description: npm start benchmark, ${stepsPerMember} no-op steps per member.
data_source:
  type: csv
  path: ${RUNBOOK}.csv
  primary_key: Upn
  batch_time: immediate
phases:
  - name: go
    offset: T-0
    steps:
${steps}
`;
}

function membersCsv(): string {
  const rows = Array.from({ length: members }, (_, i) => `user${i}@contoso.test`);
  return `Upn\n${rows.join("\n")}\n`;
}

function memoryLines(memory: TreeMemory): string[] {
  const label: Record<ProcessGroup, string> = {
    node: "node (tsx launcher + the system)",
    postgres: "postgres (server + backends)",
    npm: "npm (the wrapper)",
    other: "other (shells)",
  };
  const row = (name: string, peak: { rssMb: number; pssMb: number; processes: number }) =>
    `  ${name.padEnd(34)} ${String(peak.rssMb).padStart(6)} MB  (PSS ${peak.pssMb} MB, ${peak.processes} processes at most)`;
  return [
    `peak RSS of npm start's process tree (VmRSS of each process every 500 ms, ${memory.samples} samples;`,
    "  per group the peak of its sum; postgres VmRSS counts shared buffers once per backend, PSS does not):",
    ...processGroups.map((group) => row(label[group], memory.groups[group])),
    row("whole tree", memory.total),
  ];
}

/** Pino lines at warn (40) or above in the child's output: the product complaining during the run. */
function logProblems(file: string): string {
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => /"level":(40|50|60)\b/.test(line));
  const messages = [...new Set(lines.map((line) => /"msg":"([^"]*)"/.exec(line)?.[1] ?? line.slice(0, 120)))];
  return lines.length === 0 ? "none" : `${lines.length} lines: ${messages.slice(0, 5).join(" | ")}`;
}

function tail(file: string, count: number): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-count).join("\n");
  } catch {
    return "(no output)";
  }
}

function progress(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

// Last: main() uses the constants declared above.
try {
  await main();
} catch (error) {
  process.exitCode = 1;
  // Interrupted: the requests failed because the system was being stopped, nothing to explain.
  if (cleaning === undefined) {
    process.stderr.write(`\nbench failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.stderr.write(`last lines of npm start's output:\n${tail(logFile, 30)}\n`);
  }
} finally {
  await cleanup();
}
