// Real Dapr for the orchestrator benchmark (BENCH_RUNTIME=dapr): daprd, placement and scheduler
// of a pinned release (MATOOLKIT_DAPR_VERSION, default the newest; built by `npm run
// dapr:install`), a redis-server of the bench's own, and the shipped components/local +
// dapr/resources with only the Redis host changed, dapr/config.yaml as shipped but for its
// tracing, which follows the app's (daprTracingOf). Wired as
// libs/dapr-harness's openRealSidecar wires it (the real-Dapr adapter tests' fixture), with the app
// id of the all-in-one system, and with daprd's internal gRPC API on loopback too (daprd binds it
// to every interface unless told; openRealSidecar does not tell it).
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { procStatFields } from "./proc-stat.ts";
import {
  renderDaprConfiguration,
  freePort,
  renderDaprResources,
  repoRoot,
  requireRuntimeBinaries,
  startDaprControlPlane,
  startDaprd,
  startRedisServer,
  type ManagedProcess,
} from "@matoolkit/dapr-harness";

export interface RealDapr {
  readonly version: string;
  /** The Configuration daprd runs with: dapr/config.yaml, or BENCH_DAPR_CONFIG's file. */
  readonly config: string;
  /** What the platform reads to run every port on this sidecar (MATOOLKIT_RUNTIME=dapr preset). */
  readonly env: Readonly<Record<string, string>>;
  /** The daemons the bench started, by role, for CPU and memory figures. */
  readonly daemons: ReadonlyArray<{ readonly role: string; readonly pid: number }>;
  /** Lines of the daemons' logs at level warning or worse, and how many, by daemon. */
  problems(): Array<{ role: string; count: number; sample: string[] }>;
  /** Copies the daemons' logs to `dir` (before close removes them). */
  keepLogs(dir: string): void;
  /** Stops daprd, then redis-server, then scheduler and placement, and removes their data. */
  close(): Promise<void>;
}

export async function startRealDapr(
  env: Readonly<Record<string, string | undefined>>,
  app: { readonly appRecordsSpans: boolean },
): Promise<RealDapr> {
  const binaries = requireRuntimeBinaries(env.MATOOLKIT_DAPR_VERSION ?? "newest", env);
  const dir = mkdtempSync(join(tmpdir(), `matoolkit-bench-dapr-${binaries.version}-`));
  const processes: Array<{ role: string; process: ManagedProcess }> = [];
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const controlPlane = await startDaprControlPlane({ binaries, dataDir: join(dir, "control-plane") });
    closers.push(() => controlPlane.stop());
    processes.push({ role: "placement", process: controlPlane.placement });
    processes.push({ role: "scheduler", process: controlPlane.scheduler });
    const redis = await startRedisServer({ dataDir: join(dir, "redis") });
    closers.push(() => redis.stop());
    processes.push({ role: "redis", process: redis.process });
    const redisHost = `${redis.host}:${redis.port}`;
    renderDaprResources({
      sourceDirs: [join(repoRoot, "components", "local"), join(repoRoot, "dapr", "resources")],
      targetDir: join(dir, "resources"),
      overrides: { "matoolkit-pubsub": { redisHost }, "matoolkit-state": { redisHost } },
    });
    // An experiment only (another Configuration); unset: dapr/config.yaml. Either way with name
    // resolution in a SQLite file of its own (never mDNS on the network), and daprd recording
    // spans only when the app does (see daprTracingOf).
    const tracing = daprTracingOf(env.BENCH_DAPR_TRACING, app.appRecordsSpans);
    const configFile = renderDaprConfiguration({
      source: env.BENCH_DAPR_CONFIG ?? join(repoRoot, "dapr", "config.yaml"),
      targetDir: join(dir, "config"),
      ...(tracing.samplingRate === undefined ? {} : { tracingSamplingRate: tracing.samplingRate }),
    });
    const appPort = await freePort();
    const daprd = await startDaprd({
      binaries,
      appId: "matoolkit",
      appPort,
      resourcesPaths: [join(dir, "resources")],
      configFile,
      placementAddress: controlPlane.placementAddress,
      schedulerAddress: controlPlane.schedulerAddress,
      logDir: dir,
    });
    closers.push(() => daprd.stop());
    processes.unshift({ role: "daprd", process: daprd.process });
    return {
      version: binaries.version,
      config: `${env.BENCH_DAPR_CONFIG ?? "dapr/config.yaml"}${tracing.note}`,
      env: {
        MATOOLKIT_RUNTIME: "dapr",
        DAPR_HTTP_ENDPOINT: daprd.httpEndpoint,
        DAPR_GRPC_PORT: String(daprd.grpcPort),
        MATOOLKIT_DAPR_APP_PORT: String(appPort),
      },
      daemons: processes.map(({ role, process }) => ({ role, pid: process.pid })),
      problems() {
        return processes.map(({ role, process }) => {
          const lines = readLines(process.logFile).filter(isProblem);
          const kinds = new Map<string, number>();
          for (const line of lines) kinds.set(shorten(line), (kinds.get(shorten(line)) ?? 0) + 1);
          const sample = [...kinds].slice(0, 6).map(([text, count]) => `${count}× ${text}`);
          return { role, count: lines.length, sample };
        });
      },
      keepLogs(target: string) {
        for (const { process } of processes)
          copyFileSync(process.logFile, join(target, basename(process.logFile)));
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  const fields = procStatFields(pid);
  // Fields 14 and 15 of proc(5) (utime, stime), in clock ticks (100 per second on Linux).
  return fields === undefined ? Number.NaN : (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resident memory of a process now, in MB, from /proc (Linux). */
export function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Math.round(Number(/^VmRSS:\s*(\d+)\s*kB/m.exec(status)?.[1] ?? Number.NaN) / 1024);
  } catch {
    return Number.NaN;
  }
}

/**
 * Dapr's workflow SDK narrates every work item with console.log/info/debug (its worker takes no
 * logger), which would bury the figures on stdout: those are counted and the last 500 kept in
 * memory instead (written out with BENCH_KEEP_LOGS). Warnings and errors stay on stderr.
 */
export function divertConsoleNarration(): { lines(): number; writeTo(file: string): void } {
  const kept: string[] = [];
  let count = 0;
  const write = (...args: unknown[]) => {
    count += 1;
    kept.push(args.map((arg) => (typeof arg === "string" ? arg : safeJson(arg))).join(" "));
    if (kept.length > 500) kept.shift();
  };
  console.log = write;
  console.info = write;
  console.debug = write;
  return { lines: () => count, writeTo: (file) => writeFileSync(file, `${kept.join("\n")}\n`) };
}

function safeJson(value: unknown): string {
  try {
    return value instanceof Error ? `${value.name}: ${value.message}` : JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function readLines(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split("\n");
  } catch {
    return [];
  }
}

/**
 * What every start and stop of this setup logs at warning level: self-hosted without mTLS,
 * single-node etcd, Redis's start-up banner and the machine's overcommit setting, the
 * scheduler noting a sidecar's stream closing. Not what the run itself ran into.
 */
const expectedNotes = [
  /mTLS is disabled/,
  /increasedCardinality/,
  /Graceful shutdown timeout is infinite/,
  /Failed to read default home directory/,
  /Running http and grpc server on single port/,
  /exceeded recommended request limit/,
  /simple token is not cryptographically signed/,
  /quota exceeds the maximum value/,
  /Marking prefixes as undeliverable for one caller: stream shutdown/,
  / # (oO0OoO0OoO0Oo Redis is starting|Redis version=|Configuration loaded|Server initialized|WARNING Memory overcommit|User requested shutdown|Redis is now ready to exit)/,
];

/**
 * A line at level warning or worse, or one a daemon wrote outside its logger (Go's `log`
 * package: an exporter failing, a panic), but none of the expected notes above.
 */
function isProblem(line: string): boolean {
  if (line.trim() === "") return false;
  if (/level=(debug|info)\b|"level":"(debug|info)"/.test(line)) return false;
  if (/^\d+:[A-Z] .* [.*-] /.test(line)) return false; // redis-server below warning
  return !expectedNotes.some((note) => note.test(line));
}

/** One line's message, without its time stamp or fields, so repeats count as one kind. */
function shorten(line: string): string {
  const msg =
    /msg="((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ??
    line.replace(/^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d /, "").replace(/^\d+:[A-Z] \d+ \w+ \d+ [\d:.]+ /, "");
  return msg.length > 200 ? `${msg.slice(0, 200)}…` : msg;
}

/**
 * daprd's own spans follow the app's: the shipped Configurations trace every sidecar request
 * (samplingRate "1", to the Zipkin of `dapr init`), which cost real daprd 1.18.1 12–24 % of its
 * CPU here (1,000 × 5, three pairs; ARCHITECTURE.md, "Fifteenth round"), while the app, with no
 * OTLP endpoint, records none. Comparing runtimes, both then record no span: samplingRate "0"
 * unless the app exports spans. BENCH_DAPR_TRACING=shipped keeps the file's rate.
 */
function daprTracingOf(
  setting: string | undefined,
  appRecordsSpans: boolean,
): { samplingRate?: string; note: string } {
  if (setting === "shipped") return { note: " (its tracing as shipped)" };
  if (setting !== undefined) throw new Error(`BENCH_DAPR_TRACING must be "shipped" or unset, not ${setting}`);
  return appRecordsSpans
    ? { note: " (its tracing as shipped: the app exports spans too)" }
    : {
        samplingRate: "0",
        note: ' with samplingRate "0" (the app records no span either; BENCH_DAPR_TRACING=shipped: as shipped)',
      };
}
