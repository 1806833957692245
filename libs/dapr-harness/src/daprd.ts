import { join } from "node:path";
import type { DaprRuntimeBinaries } from "./dapr-cache.ts";
import { freePorts } from "./free-port.ts";
import { httpAnswers, startManagedProcess, waitUntilReady, type ManagedProcess } from "./managed-process.ts";

/** A real daprd sidecar for one app, on free loopback ports. */
export interface Daprd {
  readonly appId: string;
  readonly httpPort: number;
  readonly grpcPort: number;
  readonly httpEndpoint: string;
  readonly process: ManagedProcess;
  stop(): Promise<void>;
  kill(): Promise<void>;
  /** Kills (SIGKILL) or stops daprd and starts it again on the same ports, app id and files. */
  restart(how: "kill" | "stop"): Promise<void>;
}

export interface DaprdOptions {
  readonly binaries: DaprRuntimeBinaries;
  readonly appId: string;
  /** Where the app will listen; daprd waits for it before it subscribes or delivers. */
  readonly appPort: number;
  readonly resourcesPaths: readonly string[];
  readonly configFile?: string;
  readonly placementAddress?: string;
  readonly schedulerAddress?: string;
  /** Sent by the app in `dapr-api-token` (DAPR_API_TOKEN). */
  readonly apiToken?: string;
  /** Sent by daprd to the app in `dapr-api-token` (APP_API_TOKEN). */
  readonly appApiToken?: string;
  readonly logDir: string;
  readonly logLevel?: "debug" | "info" | "warn" | "error";
  readonly extraArgs?: readonly string[];
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Starts daprd and waits until its own API answers (`/v1.0/healthz/outbound`: components loaded,
 * before the app is up; daprd then waits for the app port to subscribe and deliver).
 */
export async function startDaprd(options: DaprdOptions): Promise<Daprd> {
  const [httpPort, grpcPort, internalGrpcPort, metricsPort] = (await freePorts(4)) as [
    number,
    number,
    number,
    number,
  ];
  const args = [
    "--app-id",
    options.appId,
    "--app-port",
    String(options.appPort),
    "--app-protocol",
    "http",
    "--app-channel-address",
    "127.0.0.1",
    "--dapr-listen-addresses",
    "127.0.0.1",
    "--dapr-http-port",
    String(httpPort),
    "--dapr-grpc-port",
    String(grpcPort),
    "--dapr-internal-grpc-port",
    String(internalGrpcPort),
    // Loopback only: by default daprd serves its internal API on every interface.
    "--dapr-internal-grpc-listen-address",
    "127.0.0.1",
    "--metrics-port",
    String(metricsPort),
    "--enable-metrics=false",
    "--log-level",
    options.logLevel ?? "info",
    ...options.resourcesPaths.flatMap((path) => ["--resources-path", path]),
    ...(options.configFile === undefined ? [] : ["--config", options.configFile]),
    ...(options.placementAddress === undefined ? [] : ["--placement-host-address", options.placementAddress]),
    ...(options.schedulerAddress === undefined ? [] : ["--scheduler-host-address", options.schedulerAddress]),
    ...(options.extraArgs ?? []),
  ];
  const launch = () =>
    startManagedProcess({
      name: `daprd ${options.binaries.version} (${options.appId})`,
      command: options.binaries.daprd,
      args,
      env: {
        ...options.env,
        ...(options.apiToken === undefined ? {} : { DAPR_API_TOKEN: options.apiToken }),
        ...(options.appApiToken === undefined ? {} : { APP_API_TOKEN: options.appApiToken }),
      },
      logFile: join(options.logDir, `daprd-${options.appId}-${httpPort}.log`),
    });
  const httpEndpoint = `http://127.0.0.1:${httpPort}`;
  const headers: Record<string, string> =
    options.apiToken === undefined ? {} : { "dapr-api-token": options.apiToken };
  const ready = async (started: ManagedProcess) => {
    try {
      await waitUntilReady(started, () => httpAnswers(`${httpEndpoint}/v1.0/healthz/outbound`, headers), {
        timeoutMs: 60_000,
        what: "serving its API",
      });
    } catch (error) {
      await started.stop();
      throw error;
    }
  };
  let process = launch();
  await ready(process);
  return {
    appId: options.appId,
    httpPort,
    grpcPort,
    httpEndpoint,
    get process() {
      return process;
    },
    stop: () => process.stop(),
    kill: () => process.kill(),
    async restart(how) {
      await (how === "kill" ? process.kill() : process.stop());
      process = launch();
      await ready(process);
    },
  };
}
