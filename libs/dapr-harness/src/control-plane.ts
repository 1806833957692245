import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { DaprRuntimeBinaries } from "./dapr-cache.ts";
import { freePorts } from "./free-port.ts";
import { httpAnswers, startManagedProcess, waitUntilReady, type ManagedProcess } from "./managed-process.ts";

/**
 * Dapr's control plane for self-hosted mode, as `dapr init --slim` leaves the user to run it:
 * placement (actors, hence Dapr Workflow) and scheduler (the Jobs API, workflow timers and
 * reminders, with its embedded etcd). Each on free loopback ports with its own data folder, so
 * several test files run theirs side by side.
 */
export interface DaprControlPlane {
  readonly placementAddress: string;
  readonly schedulerAddress: string;
  readonly placement: ManagedProcess;
  readonly scheduler: ManagedProcess;
  /** Restarts the scheduler on the same ports and data (a drill). */
  restartScheduler(): Promise<void>;
  stop(): Promise<void>;
}

export async function startDaprControlPlane(options: {
  readonly binaries: DaprRuntimeBinaries;
  readonly dataDir: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
}): Promise<DaprControlPlane> {
  const { binaries, dataDir } = options;
  mkdirSync(dataDir, { recursive: true });
  const [
    placementPort,
    placementHealth,
    placementRaft,
    schedulerPort,
    schedulerHealth,
    etcdClient,
    etcdPeer,
  ] = (await freePorts(7)) as [number, number, number, number, number, number, number];
  const placement = startManagedProcess({
    name: `placement ${binaries.version}`,
    command: binaries.placement,
    args: [
      "--port",
      String(placementPort),
      "--listen-address",
      "127.0.0.1",
      "--healthz-port",
      String(placementHealth),
      "--healthz-listen-address",
      "127.0.0.1",
      "--id",
      "dapr-placement-0",
      "--initial-cluster",
      `dapr-placement-0=127.0.0.1:${placementRaft}`,
      "--enable-metrics=false",
      "--log-level",
      "info",
    ],
    env: options.env ?? {},
    logFile: join(dataDir, "placement.log"),
  });
  const schedulerArgs = [
    "--port",
    String(schedulerPort),
    "--listen-address",
    "127.0.0.1",
    "--healthz-port",
    String(schedulerHealth),
    "--healthz-listen-address",
    "127.0.0.1",
    "--id",
    "dapr-scheduler-server-0",
    "--etcd-initial-cluster",
    `dapr-scheduler-server-0=http://127.0.0.1:${etcdPeer}`,
    "--etcd-client-port",
    String(etcdClient),
    "--etcd-client-listen-address",
    "127.0.0.1",
    "--etcd-data-dir",
    join(dataDir, "scheduler-etcd"),
    "--enable-metrics=false",
    "--log-level",
    "info",
  ];
  const startScheduler = () =>
    startManagedProcess({
      name: `scheduler ${binaries.version}`,
      command: binaries.scheduler,
      args: schedulerArgs,
      env: options.env ?? {},
      logFile: join(dataDir, "scheduler.log"),
    });
  let scheduler = startScheduler();
  const schedulerReady = (process: ManagedProcess) =>
    waitUntilReady(process, () => httpAnswers(`http://127.0.0.1:${schedulerHealth}/healthz`), {
      timeoutMs: 60_000,
      what: "healthy",
    });
  try {
    await Promise.all([
      waitUntilReady(placement, () => httpAnswers(`http://127.0.0.1:${placementHealth}/healthz`), {
        timeoutMs: 60_000,
        what: "healthy",
      }),
      schedulerReady(scheduler),
    ]);
  } catch (error) {
    await Promise.all([placement.stop(), scheduler.stop()]);
    throw error;
  }
  return {
    placementAddress: `127.0.0.1:${placementPort}`,
    schedulerAddress: `127.0.0.1:${schedulerPort}`,
    placement,
    get scheduler() {
      return scheduler;
    },
    async restartScheduler() {
      await scheduler.stop();
      scheduler = startScheduler();
      await schedulerReady(scheduler);
    },
    async stop() {
      await Promise.all([placement.stop(), scheduler.stop()]);
    },
  };
}
