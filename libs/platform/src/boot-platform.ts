import type { Db } from "@matoolkit/db";
import {
  createDaprRuntime,
  createEmbeddedRuntime,
  createDurableTaskWorkflowEngine,
  createLogger,
  declareStaticTopology,
  startOutboxRelay,
  type DaprRuntime,
  type EmbeddedRuntime,
  type IdempotencyStore,
  type Logger,
  type MessageBus,
  type Timers,
  type WorkflowEngine,
} from "@matoolkit/runtime";
import { createWorkflowEngine } from "./create-workflow-engine.ts";
import { openDatabase } from "./open-database.ts";
import type { AdapterChoice, PlatformConfig } from "./platform-config.ts";

/**
 * What every service process stands on: a logger, the database (migrated), the runtime ports
 * filled by the configured adapters, and the outbox relay that publishes what services commit.
 * Services receive these ports and never learn which adapter is behind them.
 */
export interface Platform {
  readonly logger: Logger;
  readonly db: Db;
  readonly connectionString: string;
  readonly databaseKind: "server" | "embedded";
  /** Embedded mode: the cluster's directory (shown in the start banner). */
  readonly embeddedDataDir?: string;
  /** The adapter behind each port, for start-up logs and health output. */
  readonly adapters: AdapterChoice;
  readonly bus: MessageBus;
  readonly timers: Timers;
  readonly idempotency: IdempotencyStore;
  /** Durable workflows (batch progression); started by the orchestrator, which registers them. */
  readonly workflows: WorkflowEngine;
  /**
   * Call once every service has subscribed: in Dapr mode it opens the app port the sidecar
   * calls (daprd reads the subscriptions once, when that port first answers). No-op embedded.
   */
  start(): Promise<void>;
  /** Resolves when the runtime can serve (the Dapr sidecar answered); at once embedded. */
  readonly ready: Promise<void>;
  stop(): Promise<void>;
}

export async function bootPlatform(
  config: PlatformConfig,
  processName: string,
  logger?: Logger,
): Promise<Platform> {
  const log = logger ?? createLogger({ level: config.logLevel, name: processName });
  const { adapters } = config;
  const database = await openDatabase(config, log, processName);

  const needsEmbedded =
    adapters.bus === "embedded" || adapters.timers === "embedded" || adapters.idempotency === "embedded";
  const embedded: EmbeddedRuntime | undefined = needsEmbedded
    ? await createEmbeddedRuntime({
        connectionString: database.connectionString,
        ...(database.password === undefined ? {} : { password: database.password }),
        db: database.db,
        logger: log,
        dedupeWindowSeconds: config.dedupeWindowSeconds,
      })
    : undefined;
  const dapr: DaprRuntime | undefined =
    config.dapr === undefined
      ? undefined
      : await createDaprRuntime({
          sidecar: {
            httpEndpoint: config.dapr.httpEndpoint,
            ...(config.dapr.apiToken === undefined ? {} : { apiToken: config.dapr.apiToken }),
          },
          app: {
            host: config.dapr.appHost,
            port: config.dapr.appPort,
            ...(config.dapr.appApiToken === undefined ? {} : { apiToken: config.dapr.appApiToken }),
          },
          pubsubName: config.dapr.pubsubName,
          stateStoreName: config.dapr.stateStoreName,
          jobsApiVersion: config.dapr.jobsApiVersion,
          db: database.db,
          logger: log,
          dedupeWindowSeconds: config.dedupeWindowSeconds,
          ports: {
            bus: adapters.bus === "dapr",
            ...(adapters.timers === "embedded" ? {} : { timers: adapters.timers }),
            idempotency: adapters.idempotency === "dapr",
          },
        });

  const pick = <T>(name: string, fromDapr: T | undefined, fromEmbedded: T | undefined): T => {
    const port = fromDapr ?? fromEmbedded;
    if (port === undefined) throw new Error(`No adapter provides the ${name} port`);
    return port;
  };
  const bus = pick("bus", adapters.bus === "dapr" ? dapr?.bus : undefined, embedded?.bus);
  const timers = pick("timers", adapters.timers === "embedded" ? undefined : dapr?.timers, embedded?.timers);
  const idempotency = pick(
    "idempotency",
    adapters.idempotency === "dapr" ? dapr?.idempotency : undefined,
    embedded?.idempotency,
  );

  // Topology first: nothing the relay publishes may find its subscription missing.
  await declareStaticTopology(bus);
  const relay = await startOutboxRelay({
    db: database.db,
    connectionString: database.connectionString,
    ...(database.password === undefined ? {} : { password: database.password }),
    bus,
    logger: log,
  });
  const workflows: WorkflowEngine =
    adapters.workflow === "dapr" && config.dapr !== undefined
      ? await createWorkflowEngine(config.dapr, log)
      : createDurableTaskWorkflowEngine({ logger: log });
  log.info({ adapters }, "runtime adapters");
  return {
    logger: log,
    db: database.db,
    connectionString: database.connectionString,
    databaseKind: database.kind,
    ...(database.embeddedDataDir === undefined ? {} : { embeddedDataDir: database.embeddedDataDir }),
    adapters,
    bus,
    timers,
    idempotency,
    workflows,
    start: async () => {
      await dapr?.start();
    },
    ready: dapr?.sidecarReady ?? Promise.resolve(),
    stop: async () => {
      await workflows.stop();
      await relay.stop();
      await dapr?.stop();
      await embedded?.stop();
      await database.close();
    },
  };
}
