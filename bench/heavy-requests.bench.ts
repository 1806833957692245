// Heavy requests benchmark (issue 25, finding 4), run on demand, not in CI:
//   npm run bench:heavy-requests      (or `npx tsx bench/heavy-requests.bench.ts`; no DATABASE_URL)
// Options: BENCH_ROWS (members per CSV, default 282000: the issue's 45 MB file), BENCH_PLANS (plans
// sent at once, 3, each by its own Operator), BENCH_POLL_MS (/healthz every 50 ms),
// BENCH_DEFAULT_CHECK (1: also start with the default caps and show the file refused; 0: skip,
// e.g. on code without caps), BENCH_ROUTE (plan: POST /api/runbooks/{name}/plan by Operators;
// create: POST /api/batches by Admins, the other route that takes a member CSV, which also
// writes the members), BENCH_KEEP_DIR (1: keep the servers' logs and data folder, printed at the
// end, e.g. to read a NODE_OPTIONS="--import=…" probe's output).
// It runs `npm start` (embedded PostgreSQL, orchestrator and worker in the API's process) as a
// child with the member upload caps raised so the file is allowed (the worst allowed case), sends
// BENCH_PLANS plans of the CSV at once while a loop polls /healthz, and prints /healthz latency
// (p50/p95/max), each plan's answer and time, and the peak RSS of the server's node processes.
// Target: /healthz within 100 ms while three 45 MB plans run.
import { spawn } from "node:child_process";
import { Worker } from "node:worker_threads";
import { chmodSync, closeSync, mkdtempSync, openSync, rmSync } from "node:fs";
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
  refOf,
  sampleProcessTree,
  type TreeSampler,
} from "./process-tree-memory.ts";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RUNBOOK = "bench-heavy-requests";
const settings = z
  .object({
    BENCH_ROWS: z.coerce.number().int().min(1).default(282_000),
    BENCH_PLANS: z.coerce.number().int().min(1).max(20).default(3),
    BENCH_POLL_MS: z.coerce.number().int().min(10).default(50),
    BENCH_DEFAULT_CHECK: z.enum(["0", "1"]).default("1"),
    BENCH_ROUTE: z.enum(["plan", "create"]).default("plan"),
  })
  .parse(
    Object.fromEntries(Object.entries(process.env).filter(([k, v]) => k.startsWith("BENCH_") && v?.trim())),
  );

const workDir = mkdtempSync(path.join(tmpdir(), "matoolkit-bench-heavy-"));
chmodSync(workDir, 0o755); // as root, the embedded server runs as `postgres` and must enter it
const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** ~160 bytes a member, as the issue's 45 MB / 282k-row file: the columns a wave file has. */
function membersCsv(rows: number): string {
  const lines = ["UserPrincipalName,DisplayName,EmployeeId,Department,TargetUPN,ProxyAddresses"];
  for (let i = 0; i < rows; i++) {
    const name = `user.number${i}`;
    lines.push(
      `${name}@contoso.example,User Number ${i},E${100000 + i},Dept ${i % 40},${name}@fabrikam.example,` +
        `smtp:${name}@contoso.example;smtp:u${i}@contoso.example`,
    );
  }
  return `${lines.join("\n")}\n`;
}

const runbookYaml = `name: ${RUNBOOK}
data_source:
  type: csv
  path: members.csv
  primary_key: UserPrincipalName
  batch_time: immediate
  multi_valued_columns:
    - name: ProxyAddresses
      format: semicolon_delimited
phases:
${["pre-checks", "prepare", "cutover"]
  .map(
    (phase, index) => `  - name: ${phase}
    offset: T-${3 - index}d
    steps:
      - name: ${phase}-user
        worker_id: worker-01
        function: Test-Echo
        params: { UserId: "{{UserPrincipalName}}", Target: "{{TargetUPN}}", Employee: "{{EmployeeId}}" }
      - name: ${phase}-mail
        worker_id: worker-01
        function: Test-Echo
        params: { Identity: "{{TargetUPN}}", Addresses: "{{ProxyAddresses}}", Name: "{{DisplayName}}" }
`,
  )
  .join("")}`;

interface Started {
  readonly url: string;
  readonly dataDir: string;
  readonly pid: number;
  stop(): Promise<void>;
}

async function startNpmStart(name: string, env: Record<string, string>): Promise<Started> {
  const dataDir = path.join(workDir, name);
  const apiPort = await freePort();
  const log = openSync(path.join(workDir, `${name}.log`), "a");
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined &&
        !/^(MATOOLKIT_|DAPR_|DATABASE_URL$|PORT$|LOG_LEVEL$|AZURE_AD_)/.test(entry[0]),
    ),
  );
  const child = spawn("npm", ["start"], {
    cwd: repoRoot,
    env: {
      ...inherited,
      MATOOLKIT_DATA_DIR: dataDir,
      MATOOLKIT_EMBEDDED_PG_PORT: String(await freePort()),
      PORT: String(apiPort),
      LOG_LEVEL: "warn",
      ...env,
    },
    detached: true, // its own process group, stopped as Ctrl-C would
    stdio: ["ignore", log, log],
  });
  closeSync(log);
  const pid = child.pid!;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${apiPort}`;
  for (const deadline = Date.now() + 240_000; ; await sleep(250)) {
    if (child.exitCode !== null) throw new Error(`npm start exited; see ${workDir}/${name}.log`);
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error("npm start was not ready after 240 s");
  }
  return {
    url,
    dataDir,
    pid,
    async stop() {
      const tracked = descendantsOf(pid).flatMap((p) => refOf(p) ?? []);
      const signalAll = (signal: NodeJS.Signals) => {
        for (const target of [-pid, ...tracked.filter(isRunning).map((ref) => ref.pid)]) {
          try {
            process.kill(target, signal);
          } catch {
            // Already gone.
          }
        }
      };
      signalAll("SIGINT");
      for (const deadline = Date.now() + 60_000; tracked.some(isRunning) && Date.now() < deadline;)
        await sleep(200);
      if (tracked.some(isRunning)) signalAll("SIGKILL");
      await exited;
    },
  };
}

async function tokenFor(dataDir: string, name: string, role: "Admin" | "Operator"): Promise<string> {
  const auth = localAuthConfigSchema.parse({ mode: "local", dataDir });
  return issueLocalToken({
    dataDir,
    issuer: auth.issuer,
    audience: auth.audience,
    roles: [role],
    name,
    ttlSeconds: 3600,
  });
}

async function publishRunbook(server: Started): Promise<void> {
  const response = await fetch(`${server.url}/api/runbooks`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${await tokenFor(server.dataDir, "bench-admin", "Admin")}`,
      "content-type": "application/yaml",
    },
    body: runbookYaml,
  });
  if (response.status !== 201) throw new Error(`publish: HTTP ${response.status} ${await response.text()}`);
}

interface PlanAnswer {
  readonly status: number;
  readonly seconds: number;
  readonly summary: string;
}

async function plan(server: Started, token: string, csv: Uint8Array): Promise<PlanAnswer> {
  const started = performance.now();
  try {
    return await planOnce(server, token, csv, started);
  } catch (error) {
    return { status: 0, seconds: (performance.now() - started) / 1000, summary: `failed: ${String(error)}` };
  }
}

async function planOnce(
  server: Started,
  token: string,
  csv: Uint8Array,
  started: number,
): Promise<PlanAnswer> {
  const create = settings.BENCH_ROUTE === "create";
  const target = create
    ? `/api/batches?runbook=${RUNBOOK}&allowDuplicate=true`
    : `/api/runbooks/${RUNBOOK}/plan`;
  const response = await fetch(`${server.url}${target}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "text/csv" },
    body: csv,
    signal: AbortSignal.timeout(900_000),
  });
  const body = (await response.json()) as {
    id?: number;
    memberCount?: number;
    unresolvedCount?: number;
    detail?: string;
  };
  const seconds = (performance.now() - started) / 1000;
  const summary =
    response.status === 200
      ? `memberCount ${body.memberCount}, unresolved steps ${body.unresolvedCount}`
      : response.status === 201
        ? `batch ${body.id} with ${body.memberCount} members`
        : `${body.detail}`;
  return { status: response.status, seconds, summary };
}

/**
 * Polls /healthz every `intervalMs` (a slow answer delays the next poll) until stopped. A poll that
 * fails (a keep-alive connection the server closed late, its timer held up by a blocked loop)
 * counts as failed, with the time it took. The loop runs in a worker thread of its own: the
 * bench's main thread (the plans' responses, the /proc sampling) must not delay the polls it times.
 */
function pollHealth(
  url: string,
  intervalMs: number,
): { stop(): Promise<{ latencies: number[]; failed: number }> } {
  const worker = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
     const { performance } = require("node:perf_hooks");
     const latencies = [];
     let failed = 0;
     let running = true;
     parentPort.once("message", () => { running = false; });
     (async () => {
       while (running) {
         const started = performance.now();
         const ok = await fetch(workerData.url + "/healthz").then(
           (r) => r.arrayBuffer().then(() => r.status === 200),
           () => false,
         );
         const took = performance.now() - started;
         latencies.push(took);
         if (!ok) failed += 1;
         await new Promise((resolve) => setTimeout(resolve, Math.max(0, workerData.intervalMs - took)));
       }
       parentPort.postMessage({ latencies, failed });
     })();`,
    { eval: true, workerData: { url, intervalMs } },
  );
  const result = new Promise<{ latencies: number[]; failed: number }>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    async stop() {
      worker.postMessage("stop");
      const polled = await result;
      await worker.terminate();
      return polled;
    },
  };
}

const callerRole = settings.BENCH_ROUTE === "create" ? "Admin" : "Operator";
const caller = callerRole.toLowerCase();

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
const nodeRssMb = (sampler: TreeSampler) => sampler.stop().groups.node.rssMb;

async function measure(csv: Uint8Array): Promise<string[]> {
  const raised = {
    MATOOLKIT_MAX_MEMBER_UPLOAD_BYTES: String(Math.max(csv.length + 1024, 20 * 1024 * 1024)),
    MATOOLKIT_MAX_MEMBER_ROWS: String(Math.max(settings.BENCH_ROWS, 100_000)),
    MATOOLKIT_HEAVY_REQUESTS_TOTAL: String(Math.max(settings.BENCH_PLANS, 4)),
  };
  const server = await startNpmStart("raised", raised);
  try {
    await publishRunbook(server);
    const tokens = await Promise.all(
      Array.from({ length: settings.BENCH_PLANS }, (_, i) =>
        tokenFor(server.dataDir, `bench-${caller}-${i + 1}`, callerRole),
      ),
    );
    const idle = sampleProcessTree(server.pid, 200);
    await sleep(1_000);
    const idleRss = nodeRssMb(idle);
    progress(
      `sending ${settings.BENCH_PLANS} ${settings.BENCH_ROUTE} requests of ${(csv.length / 1e6).toFixed(1)} MB at once`,
    );
    const busy = sampleProcessTree(server.pid, 200);
    const health = pollHealth(server.url, settings.BENCH_POLL_MS);
    const started = performance.now();
    const answers = await Promise.all(tokens.map((token) => plan(server, token, csv)));
    const wall = (performance.now() - started) / 1000;
    const polled = await health.stop();
    const latencies = polled.latencies.sort((a, b) => a - b);
    const peakRss = nodeRssMb(busy);
    return [
      `caps raised for the measurement: ${Object.entries(raised)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")}`,
      ...answers.map(
        (a, i) =>
          `${settings.BENCH_ROUTE} ${i + 1} (its own ${callerRole}): HTTP ${a.status} in ${a.seconds.toFixed(1)} s: ${a.summary}`,
      ),
      `all ${settings.BENCH_PLANS} answered after ${wall.toFixed(1)} s`,
      `/healthz while they ran (${latencies.length} polls, every ${settings.BENCH_POLL_MS} ms): p50 ${percentile(latencies, 50).toFixed(0)} ms, ` +
        `p95 ${percentile(latencies, 95).toFixed(0)} ms, max ${percentile(latencies, 100).toFixed(0)} ms ` +
        `(target: max within 100 ms); ${polled.failed} polls failed`,
      `RSS of the server's node processes: ${idleRss} MB idle → peak ${peakRss} MB while the plans ran`,
    ];
  } finally {
    await server.stop();
  }
}

async function defaultCapsCheck(csv: Uint8Array): Promise<string[]> {
  const server = await startNpmStart("defaults", {});
  try {
    await publishRunbook(server);
    const operator = await tokenFor(server.dataDir, `bench-${caller}-1`, callerRole);
    const answer = await plan(server, operator, csv);
    return [
      `default caps, the same file: HTTP ${answer.status} in ${answer.seconds.toFixed(2)} s: ${answer.summary}`,
    ];
  } finally {
    await server.stop();
  }
}

try {
  // Encoded once, before any timing: the client's own UTF-8 encoding of 45 MB is not the server's.
  const csv = Buffer.from(membersCsv(settings.BENCH_ROWS));
  const load = loadavg();
  const lines = [
    `CSV: ${settings.BENCH_ROWS.toLocaleString("en-US")} members, ${(csv.length / 1024 / 1024).toFixed(1)} MB; runbook: 3 phases × 2 steps`,
    `load average at start: ${load.map((l) => l.toFixed(2)).join(" ")} (${availableParallelism()} CPUs; shared machine)`,
    ...(await measure(csv)),
    ...(settings.BENCH_DEFAULT_CHECK === "1" ? await defaultCapsCheck(csv) : []),
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  ];
  process.stdout.write(`\n${lines.join("\n")}\n`);
} finally {
  if (process.env.BENCH_KEEP_DIR === "1") progress(`logs kept in ${workDir}`);
  else rmSync(workDir, { recursive: true, force: true });
}
