import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { daprCliBinary, type DaprRuntimeBinaries } from "./dapr-cache.ts";
import { httpAnswers } from "./managed-process.ts";

/**
 * What `dapr init --slim` sets up, from the binaries built here instead of GitHub downloads
 * (which this machine cannot reach): the runtime folder the dapr CLI reads
 * (`$DAPR_RUNTIME_PATH/.dapr`, else `~/.dapr`: dapr/cli pkg/standalone/common.go
 * GetDaprRuntimePath) with bin/daprd, bin/placement, bin/scheduler and the CLI itself in bin/,
 * a default config.yaml and components/; then placement and scheduler running in the background
 * on the ports `dapr run` expects by default (localhost:50005 and :50006, dapr/cli
 * pkg/standalone/run.go), as a slim-init user starts them by hand.
 */
export interface SlimRuntimeLayout {
  readonly daprDir: string;
  readonly binDir: string;
}

export function slimRuntimeLayout(env: Readonly<Record<string, string | undefined>>): SlimRuntimeLayout {
  const base = env.DAPR_RUNTIME_PATH?.trim() || homedir();
  const daprDir = join(base, ".dapr");
  return { daprDir, binDir: join(daprDir, "bin") };
}

/** Marks binaries this repository put there, so a Dapr installed otherwise is never overwritten. */
const MARKER = ".matoolkit-built";

export function installSlimRuntime(options: {
  readonly layout: SlimRuntimeLayout;
  readonly binaries: DaprRuntimeBinaries;
  readonly cacheRoot: string;
}): { readonly replaced: boolean } {
  const { layout, binaries } = options;
  mkdirSync(layout.binDir, { recursive: true });
  const marker = join(layout.binDir, MARKER);
  if (existsSync(join(layout.binDir, "daprd")) && !existsSync(marker)) {
    throw new Error(
      `${layout.binDir} holds a Dapr runtime installed by other means: set DAPR_RUNTIME_PATH to another folder, or remove it (dapr uninstall)`,
    );
  }
  const previous = existsSync(marker) ? readFileSync(marker, "utf8") : "";
  for (const [name, source] of [
    ["daprd", binaries.daprd],
    ["placement", binaries.placement],
    ["scheduler", binaries.scheduler],
    ["dapr", daprCliBinary(options.cacheRoot)],
  ] as const) {
    if (!existsSync(source)) throw new Error(`${source} is missing: run npm run dapr:install`);
    const target = join(layout.binDir, name);
    rmSync(target, { force: true });
    copyFileSync(source, target);
  }
  writeFileSync(marker, binaries.version);
  // As `dapr init --slim` writes it: no tracing (no Zipkin in slim mode).
  const config = join(layout.daprDir, "config.yaml");
  if (!existsSync(config)) {
    writeFileSync(
      config,
      "apiVersion: dapr.io/v1alpha1\nkind: Configuration\nmetadata:\n  name: daprConfig\nspec: {}\n",
    );
  }
  mkdirSync(join(layout.daprDir, "components"), { recursive: true });
  return { replaced: previous !== "" && previous !== binaries.version };
}

/** The control plane's fixed local ports: gRPC where `dapr run` looks, health and metrics out of the apps' way. */
export const slimControlPlanePorts = {
  placement: { grpc: 50005, healthz: 58080, metrics: 59090, raft: 58201 },
  scheduler: { grpc: 50006, healthz: 58081, metrics: 59091, etcdClient: 52379, etcdPeer: 52380 },
} as const;

interface Daemon {
  readonly name: "placement" | "scheduler";
  readonly args: readonly string[];
  readonly healthz: number;
}

function daemons(layout: SlimRuntimeLayout): Daemon[] {
  const p = slimControlPlanePorts.placement;
  const s = slimControlPlanePorts.scheduler;
  return [
    {
      name: "placement",
      healthz: p.healthz,
      args: [
        "--port",
        String(p.grpc),
        "--healthz-port",
        String(p.healthz),
        "--metrics-port",
        String(p.metrics),
        "--id",
        "dapr-placement-0",
        "--initial-cluster",
        `dapr-placement-0=127.0.0.1:${p.raft}`,
      ],
    },
    {
      name: "scheduler",
      healthz: s.healthz,
      args: [
        "--port",
        String(s.grpc),
        "--healthz-port",
        String(s.healthz),
        "--metrics-port",
        String(s.metrics),
        "--id",
        "dapr-scheduler-server-0",
        "--etcd-initial-cluster",
        `dapr-scheduler-server-0=http://127.0.0.1:${s.etcdPeer}`,
        "--etcd-client-port",
        String(s.etcdClient),
        // dapr/cli keeps the slim scheduler's data in <runtime>/.dapr/scheduler/data.
        "--etcd-data-dir",
        join(layout.daprDir, "scheduler", "data"),
      ],
    },
  ];
}

const pidFile = (layout: SlimRuntimeLayout, name: string) => join(layout.daprDir, "run", `${name}.pid`);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts placement and scheduler in the background unless they already run; waits until healthy. */
export async function startSlimControlPlane(layout: SlimRuntimeLayout): Promise<string[]> {
  mkdirSync(join(layout.daprDir, "run"), { recursive: true });
  mkdirSync(join(layout.daprDir, "logs"), { recursive: true });
  const lines: string[] = [];
  for (const daemon of daemons(layout)) {
    const file = pidFile(layout, daemon.name);
    const known = existsSync(file) ? Number(readFileSync(file, "utf8")) : undefined;
    if (
      known !== undefined &&
      alive(known) &&
      (await httpAnswers(`http://127.0.0.1:${daemon.healthz}/healthz`).catch(() => false))
    ) {
      lines.push(`${daemon.name} already running (pid ${known})`);
      continue;
    }
    const log = openSync(join(layout.daprDir, "logs", `${daemon.name}.log`), "a");
    const child = spawn(join(layout.binDir, daemon.name), daemon.args, {
      detached: true,
      stdio: ["ignore", log, log],
    });
    child.unref();
    writeFileSync(file, String(child.pid));
    const deadline = Date.now() + 60_000;
    while (!(await httpAnswers(`http://127.0.0.1:${daemon.healthz}/healthz`).catch(() => false))) {
      if (child.pid === undefined || !alive(child.pid) || Date.now() > deadline) {
        throw new Error(
          `${daemon.name} did not become healthy (log ${join(layout.daprDir, "logs", `${daemon.name}.log`)})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    lines.push(
      `${daemon.name} started (pid ${child.pid}, log ${join(layout.daprDir, "logs", `${daemon.name}.log`)})`,
    );
  }
  return lines;
}

/** Stops what startSlimControlPlane started (by its pid files). */
export async function stopSlimControlPlane(layout: SlimRuntimeLayout): Promise<string[]> {
  const lines: string[] = [];
  for (const daemon of daemons(layout)) {
    const file = pidFile(layout, daemon.name);
    if (!existsSync(file)) continue;
    const pid = Number(readFileSync(file, "utf8"));
    if (alive(pid)) {
      process.kill(pid, "SIGTERM");
      const deadline = Date.now() + 15_000;
      while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      if (alive(pid)) process.kill(pid, "SIGKILL");
      lines.push(`${daemon.name} stopped (pid ${pid})`);
    }
    rmSync(file, { force: true });
  }
  return lines;
}
