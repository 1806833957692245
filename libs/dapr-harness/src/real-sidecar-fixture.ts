import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startDaprControlPlane, type DaprControlPlane } from "./control-plane.ts";
import { startDaprd, type Daprd } from "./daprd.ts";
import { freePort } from "./free-port.ts";
import { startRedisServer, type HarnessRedis } from "./redis-server.ts";
import { renderDaprConfiguration, renderDaprResources } from "./render-resources.ts";
import { requireRuntimeBinaries } from "./require-binaries.ts";

/** The repository root (this file is libs/dapr-harness/src/…): where components/ and dapr/ live. */
export const repoRoot = resolve(import.meta.dirname, "../../..");

/**
 * One real daprd for an adapter test, with the control plane and a Redis of its own, on
 * components/local (the shipped files, pointed at that Redis). `resiliency: false` leaves out
 * dapr/resources, so a failing delivery is dead-lettered at once instead of after the inbound
 * retry window; `configYaml` replaces dapr/config.yaml (e.g. without workflow limits, to show
 * what they prevent).
 */
export interface RealSidecarFixture {
  readonly version: string;
  readonly appPort: number;
  readonly daprd: Daprd;
  readonly redis: HarnessRedis;
  readonly controlPlane: DaprControlPlane;
  /** The sidecar's HTTP API, e.g. http://127.0.0.1:PORT. */
  readonly httpEndpoint: string;
  close(): Promise<void>;
}

export async function openRealSidecar(options: {
  readonly version: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly appId?: string;
  readonly resiliency?: boolean;
  readonly configYaml?: string;
  /** DAPR_API_TOKEN and APP_API_TOKEN of the sidecar (token authentication both ways). */
  readonly apiToken?: string;
  readonly appApiToken?: string;
}): Promise<RealSidecarFixture> {
  const binaries = requireRuntimeBinaries(options.version, options.env);
  const dir = mkdtempSync(join(tmpdir(), `matoolkit-sidecar-${binaries.version}-`));
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const controlPlane = await startDaprControlPlane({ binaries, dataDir: join(dir, "control-plane") });
    closers.push(() => controlPlane.stop());
    const redis = await startRedisServer({ dataDir: join(dir, "redis") });
    closers.push(() => redis.stop());
    const address = `${redis.host}:${redis.port}`;
    renderDaprResources({
      sourceDirs: [
        join(repoRoot, "components", "local"),
        ...(options.resiliency === false ? [] : [join(repoRoot, "dapr", "resources")]),
      ],
      targetDir: join(dir, "resources"),
      overrides: { "matoolkit-pubsub": { redisHost: address }, "matoolkit-state": { redisHost: address } },
    });
    let source = join(repoRoot, "dapr", "config.yaml");
    if (options.configYaml !== undefined) {
      source = join(dir, "config.source.yaml");
      writeFileSync(source, options.configYaml);
    }
    const configFile = renderDaprConfiguration({ source, targetDir: join(dir, "config") });
    const appPort = await freePort();
    const daprd = await startDaprd({
      binaries,
      appId: options.appId ?? "matoolkit-test",
      appPort,
      resourcesPaths: [join(dir, "resources")],
      configFile,
      placementAddress: controlPlane.placementAddress,
      schedulerAddress: controlPlane.schedulerAddress,
      logDir: dir,
      ...(options.apiToken === undefined ? {} : { apiToken: options.apiToken }),
      ...(options.appApiToken === undefined ? {} : { appApiToken: options.appApiToken }),
    });
    closers.push(() => daprd.stop());
    return {
      version: binaries.version,
      appPort,
      daprd,
      redis,
      controlPlane,
      httpEndpoint: daprd.httpEndpoint,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
