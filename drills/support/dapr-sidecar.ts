import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  freePorts,
  httpAnswers,
  startManagedProcess,
  waitUntilReady,
  type DaprRuntimeBinaries,
  type ManagedProcess,
} from "@matoolkit/dapr-harness";

/**
 * The app's daprd for the Dapr drills, restartable on the SAME ports: the app was started with
 * DAPR_HTTP_ENDPOINT and DAPR_GRPC_PORT and keeps them, as an app container keeps its pod's
 * sidecar address when that sidecar restarts. The harness's startDaprd picks new free ports on
 * every start, so the flags are repeated here (as libs/dapr-harness/src/daprd.ts writes them) with
 * ports chosen once. Same app id, resources, config and control plane on every start.
 */
export interface DrillSidecar {
  readonly httpEndpoint: string;
  readonly grpcPort: number;
  /** The current daprd (a new process after each restart). */
  process(): ManagedProcess;
  /** Every log file written so far, one per start (daprd-<start>.log). */
  logFiles(): readonly string[];
  /** SIGKILL (a crash of the sidecar container); resolves once it exited. */
  kill(): Promise<void>;
  /** SIGTERM, SIGKILL after the grace period (an orderly sidecar restart). */
  stop(): Promise<void>;
  /** Starts daprd again on the same ports; resolves once its API answers. */
  start(): Promise<void>;
}

export async function openDrillSidecar(options: {
  readonly binaries: DaprRuntimeBinaries;
  readonly appId: string;
  readonly appPort: number;
  readonly resourcesDir: string;
  readonly configFile: string;
  readonly placementAddress: string;
  readonly schedulerAddress: string;
  readonly logDir: string;
}): Promise<DrillSidecar> {
  const [httpPort, grpcPort, internalGrpcPort, metricsPort] = (await freePorts(4)) as [
    number,
    number,
    number,
    number,
  ];
  const httpEndpoint = `http://127.0.0.1:${httpPort}`;
  const logFiles: string[] = [];
  let current: ManagedProcess | undefined;
  // prettier-ignore
  const args = [
    "--app-id", options.appId,
    "--app-port", String(options.appPort),
    "--app-protocol", "http",
    "--app-channel-address", "127.0.0.1",
    "--dapr-listen-addresses", "127.0.0.1",
    "--dapr-http-port", String(httpPort),
    "--dapr-grpc-port", String(grpcPort),
    "--dapr-internal-grpc-port", String(internalGrpcPort),
    // Loopback only: by default daprd serves its internal API on every interface.
    "--dapr-internal-grpc-listen-address", "127.0.0.1",
    "--metrics-port", String(metricsPort),
    "--enable-metrics=false",
    "--log-level", "info",
    "--resources-path", options.resourcesDir,
    "--config", options.configFile,
    "--placement-host-address", options.placementAddress,
    "--scheduler-host-address", options.schedulerAddress,
  ];
  const sidecar: DrillSidecar = {
    httpEndpoint,
    grpcPort,
    process() {
      if (current === undefined) throw new Error("daprd is not started");
      return current;
    },
    logFiles: () => logFiles,
    async kill() {
      await current?.kill();
    },
    async stop() {
      await current?.stop(20_000);
    },
    async start() {
      if (current !== undefined && !current.hasExited()) throw new Error("daprd is already running");
      const logFile = join(options.logDir, `daprd-${logFiles.length + 1}.log`);
      logFiles.push(logFile);
      current = startManagedProcess({
        name: `daprd ${options.binaries.version} (${options.appId}) start ${logFiles.length}`,
        command: options.binaries.daprd,
        args,
        env: {},
        logFile,
      });
      // Outbound health: components loaded and the API served (before the app is reachable;
      // daprd then waits for the app port before it subscribes and delivers).
      await waitUntilReady(current, () => httpAnswers(`${httpEndpoint}/v1.0/healthz/outbound`), {
        timeoutMs: 60_000,
        what: "serving its API",
      });
    },
  };
  await sidecar.start();
  return sidecar;
}

/** The batch's Dapr Workflow instance as daprd reports it (RUNNING while it is in flight). */
export async function workflowStatus(daprHttp: string, batchId: number): Promise<string> {
  try {
    const response = await fetch(`${daprHttp}/v1.0/workflows/dapr/batch-${batchId}`, {
      signal: AbortSignal.timeout(5_000),
    });
    const body = (await response.json()) as { runtimeStatus?: string };
    return body.runtimeStatus ?? `HTTP ${response.status}`;
  } catch (error) {
    return `unknown (${(error as Error).message})`;
  }
}

/**
 * Waits for the batch's workflow instance to end after its batch did: it ends on its next run
 * (a nudge when the batch ends, else the 60 s re-check), so a RUNNING instance well after that
 * means no workflow worker is taking its work items.
 */
export async function waitForWorkflowEnd(
  daprHttp: string,
  batchId: number,
  timeoutMs: number,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let status = await workflowStatus(daprHttp, batchId);
  while (!["COMPLETED", "FAILED", "TERMINATED"].includes(status) && Date.now() < deadline) {
    await sleep(1_000);
    status = await workflowStatus(daprHttp, batchId);
  }
  return status;
}
