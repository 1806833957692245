import { execFile, execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import pg from "pg";
import { topics } from "@matoolkit/domain";
import {
  createNatsStreams,
  createRabbitMqVhost,
  freePort,
  renderDaprResources,
  repoRoot,
  requireRuntimeBinaries,
  startDaprControlPlane,
  startRedisServer,
  type DaprControlPlane,
  type HarnessRedis,
  type MetadataOverrides,
} from "@matoolkit/dapr-harness";
import { openDrillSidecar, type DrillSidecar } from "./dapr-sidecar.ts";

const run = promisify(execFile);

/**
 * components/local (Redis Streams + Redis state), components/rabbitmq or components/nats (both
 * with PostgreSQL v2 state).
 */
export type DrillBroker = "redis" | "rabbitmq" | "nats";

/** The component folder each broker's drill loads, and what it runs on, for the drills' output. */
export const drillBrokerProfiles: Record<DrillBroker, { folder: string; runsOn: string }> = {
  redis: { folder: "local", runsOn: "components/local (own Redis, appendonly)" },
  rabbitmq: { folder: "rabbitmq", runsOn: "components/rabbitmq (own vhost, PostgreSQL state)" },
  nats: { folder: "nats", runsOn: "components/nats (own JetStream streams, PostgreSQL state)" },
};

export const isDrillBroker = (name: string): name is DrillBroker => Object.hasOwn(drillBrokerProfiles, name);

/**
 * Everything around the app of a Dapr drill, all real: placement and scheduler, the broker, a
 * PostgreSQL database of the drill's own (the app's; on rabbitmq also the Dapr state store's, in
 * its dapr_ tables as components/rabbitmq ships it) and one daprd. The shipped component files
 * are rendered with only hosts and connection strings changed, so Redis keeps processingTimeout
 * 300s: what a killed sidecar left pending comes back after 5 minutes, and the drills measure it.
 */
export interface DaprDrillStack {
  readonly version: string;
  readonly broker: DrillBroker;
  readonly controlPlane: DaprControlPlane;
  readonly sidecar: DrillSidecar;
  readonly databaseUrl: string;
  /** For the app: MATOOLKIT_RUNTIME=dapr, DAPR_HTTP_ENDPOINT, DAPR_GRPC_PORT, app port, DATABASE_URL. */
  readonly appEnv: Readonly<Record<string, string>>;
  /**
   * Broker down for `downMs`, then back (Redis: SIGTERM, appendonly file kept; RabbitMQ:
   * stop_app/start_app). NATS: refused (the machine's nats-server is a system service).
   */
  restartBroker(downMs: number): Promise<void>;
  /** What close(true) leaves behind, to name in the drill's output. */
  kept(): string[];
  /**
   * Stops everything; `keepData` leaves the drill's database (and RabbitMQ vhost) for a look after
   * a failure: drop them by hand (DROP DATABASE, rabbitmqctl delete_vhost).
   */
  close(keepData?: boolean): Promise<void>;
}

export async function openDaprDrillStack(options: {
  readonly broker: DrillBroker;
  readonly dir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Metadata of matoolkit-pubsub changed from the shipped file (a drill's own setting). */
  readonly pubsubMetadata?: Readonly<Record<string, string>>;
}): Promise<DaprDrillStack> {
  const { dir, env } = options;
  const binaries = requireRuntimeBinaries(env.MATOOLKIT_DAPR_VERSION?.trim() || "newest", env);
  const closers: Array<() => Promise<void>> = [];
  let keepData = false;
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => undefined);
  };
  try {
    const controlPlane = await startDaprControlPlane({ binaries, dataDir: path.join(dir, "control-plane") });
    closers.push(() => controlPlane.stop());
    const database = await createDrillDatabase(
      env.DATABASE_URL?.trim() || "postgres://postgres@127.0.0.1:5432/postgres",
    );
    closers.push(() => (keepData ? Promise.resolve() : database.drop()));
    let redis: HarnessRedis | undefined;
    let vhostName: string | undefined;
    let overrides: MetadataOverrides;
    if (options.broker === "redis") {
      redis = await startRedisServer({ dataDir: path.join(dir, "redis"), durable: true });
      closers.push(() => redis!.stop());
      const address = `${redis.host}:${redis.port}`;
      overrides = { "matoolkit-pubsub": { redisHost: address }, "matoolkit-state": { redisHost: address } };
    } else if (options.broker === "rabbitmq") {
      const vhost = await createRabbitMqVhost({});
      vhostName = vhost.name;
      closers.push(() => (keepData ? Promise.resolve() : vhost.delete()));
      overrides = {
        "matoolkit-pubsub": { connectionString: vhost.url },
        "matoolkit-state": { connectionString: postgresStateConnection(database.url) },
      };
    } else {
      // One stream per topic and its dead-letter twin, named for this run, as components/README.md
      // asks an operator to create them; the shipped ackWait (5 minutes) is kept.
      const streams = await createNatsStreams({
        topics: Object.values(topics).flatMap((topic) => [topic, `${topic}-deadletter`]),
      });
      closers.push(() => streams.delete());
      overrides = {
        "matoolkit-pubsub": { natsURL: streams.url },
        "matoolkit-state": { connectionString: postgresStateConnection(database.url) },
      };
    }
    const resourcesDir = path.join(dir, "resources");
    renderDaprResources({
      sourceDirs: [
        path.join(repoRoot, "components", drillBrokerProfiles[options.broker].folder),
        path.join(repoRoot, "dapr", "resources"),
      ],
      targetDir: resourcesDir,
      overrides: {
        ...overrides,
        "matoolkit-pubsub": { ...overrides["matoolkit-pubsub"], ...options.pubsubMetadata },
      },
    });
    const appPort = await freePort();
    const logDir = path.join(dir, "daprd");
    mkdirSync(logDir, { recursive: true });
    const sidecar = await openDrillSidecar({
      binaries,
      appId: "matoolkit",
      appPort,
      resourcesDir,
      configFile: path.join(repoRoot, "dapr", "config.yaml"),
      placementAddress: controlPlane.placementAddress,
      schedulerAddress: controlPlane.schedulerAddress,
      logDir,
    });
    closers.push(() => sidecar.stop());
    return {
      version: binaries.version,
      broker: options.broker,
      controlPlane,
      sidecar,
      databaseUrl: database.url,
      appEnv: {
        MATOOLKIT_RUNTIME: "dapr",
        DAPR_HTTP_ENDPOINT: sidecar.httpEndpoint,
        DAPR_GRPC_PORT: String(sidecar.grpcPort),
        MATOOLKIT_DAPR_APP_PORT: String(appPort),
        DATABASE_URL: database.url,
      },
      async restartBroker(downMs) {
        if (redis !== undefined) {
          await redis.stop();
          await sleep(downMs);
          await redis.restart();
        } else if (options.broker === "rabbitmq") {
          await rabbitMqOutage(downMs);
        } else {
          throw new Error(`restartBroker: not drilled on ${options.broker}`);
        }
      },
      kept: () => [
        `database ${database.url}`,
        ...(vhostName === undefined ? [] : [`RabbitMQ vhost ${vhostName}`]),
      ],
      async close(keep = false) {
        keepData = keep;
        await close();
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** state.postgresql v2's connection string for the drill's own database. */
function postgresStateConnection(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  return `host=${url.hostname} port=${url.port || "5432"} user=${decodeURIComponent(url.username || "postgres")} database=${url.pathname.slice(1)} connect_timeout=10`;
}

/**
 * The machine's RabbitMQ stopped (stop_app: connections closed, durable queues and persistent
 * messages kept) and started again. It is shared with everything else on this machine, so
 * start_app runs in a finally block, and on SIGINT/SIGTERM during the outage as well.
 */
async function rabbitMqOutage(downMs: number): Promise<void> {
  const startApp = () => execFileSync("rabbitmqctl", ["start_app"], { stdio: "ignore" });
  const onSignal = (signal: NodeJS.Signals) => {
    startApp();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    await run("rabbitmqctl", ["stop_app"]);
    await sleep(downMs);
  } finally {
    await run("rabbitmqctl", ["start_app"]);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** A database of the drill's own on the machine's PostgreSQL, dropped at the end. */
async function createDrillDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `matoolkit_drill_dapr_${process.pid}_${Date.now() % 100_000}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
