import type { Db } from "@matoolkit/db";
import {
  createDaprRuntime,
  createEmbeddedRuntime,
  createDurableTaskWorkflowEngine,
  createLogger,
  declareStaticTopology,
  startOutboxRelay,
  startTelemetry,
  type DaprRuntime,
  type EmbeddedRuntime,
  type IdempotencyStore,
  type Logger,
  type MessageBus,
  type Timers,
  type WorkflowEngine,
} from "@matoolkit/runtime";
import { withoutForeignSettlement } from "./bus-capabilities.ts";
import { createWorkflowEngine } from "./create-workflow-engine.ts";
import { openDatabase, type OpenDatabase } from "./open-database.ts";
import type { AdapterChoice, PlatformConfig } from "./platform-config.ts";

/**
 * What every service process stands on: a logger and the runtime ports filled by the configured
 * adapters. Services receive these ports and never learn which adapter is behind them. A process
 * without SQL (the worker on Dapr) gets only this: no database is opened at all.
 */
export interface RuntimePlatform {
  readonly logger: Logger;
  /** "none": no database was opened (the worker on Dapr: bus and state store only). */
  readonly databaseKind: "server" | "embedded" | "none";
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

/**
 * The platform of a service that owns SQL tables (orchestrator, scheduler, admin API, all-in-one):
 * the database, migrated or checked current (MATOOLKIT_MIGRATE_ON_START), and, when the service
 * writes the outbox, the relay that publishes what it commits.
 */
export interface Platform extends RuntimePlatform {
  readonly db: Db;
  readonly connectionString: string;
  readonly databaseKind: "server" | "embedded";
}

export interface BootOptions {
  readonly logger?: Logger;
  /**
   * Starts the outbox relay (default true). Only services that write the outbox need it: the
   * orchestrator, the scheduler and the admin API; the worker publishes its results directly.
   */
  readonly outboxRelay?: boolean;
  /** Dapr: record the worker pools' dead letters here (the orchestrator; the worker has no database). */
  readonly adoptWorkerJobDeadLetters?: boolean;
  /** Tests: stands in for openDatabase (e.g. one that throws, to prove it is never called). */
  readonly openDatabase?: typeof openDatabase;
}

/** A service with SQL tables: fails when the configuration says it runs without them. */
export async function bootPlatform(
  config: PlatformConfig,
  processName: string,
  options: BootOptions = {},
): Promise<Platform> {
  if (!config.usesSql)
    throw new Error(`${processName} needs its SQL tables: parse its configuration with usesSql`);
  const platform = await boot(config, processName, options);
  if (platform.database === undefined) throw new Error(`${processName}: no database was opened`);
  const { database } = platform;
  return {
    ...platform.runtime,
    db: database.db,
    connectionString: database.connectionString,
    databaseKind: database.kind,
  };
}

/**
 * A process with no SQL tables of its own (the worker): a database is opened only when an
 * embedded adapter keeps its state there (the embedded bus and idempotency store). On Dapr
 * nothing is opened, and a DATABASE_URL is ignored.
 */
export async function bootRuntimePlatform(
  config: PlatformConfig,
  processName: string,
  options: BootOptions = {},
): Promise<RuntimePlatform> {
  return (await boot(config, processName, { ...options, outboxRelay: options.outboxRelay ?? false })).runtime;
}

async function boot(
  config: PlatformConfig,
  processName: string,
  options: BootOptions,
): Promise<{ runtime: RuntimePlatform; database?: OpenDatabase }> {
  const log = options.logger ?? createLogger({ level: config.logLevel, name: processName });
  const { adapters } = config;
  // Traces, metrics, trace context in every message (libs/runtime/src/telemetry): keep this call.
  const telemetry = await startTelemetry({ config: config.telemetry, service: processName, logger: log });

  const needsEmbedded =
    adapters.bus === "embedded" || adapters.timers === "embedded" || adapters.idempotency === "embedded";
  if (!config.usesSql && !needsEmbedded && config.databaseUrl !== undefined) {
    log.info("DATABASE_URL is set but not used: this process keeps no state in SQL on Dapr");
  }
  const database =
    config.usesSql || needsEmbedded
      ? await (options.openDatabase ?? openDatabase)(config, log, processName)
      : undefined;

  const embedded: EmbeddedRuntime | undefined =
    needsEmbedded && database !== undefined
      ? await createEmbeddedRuntime({
          connectionString: database.connectionString,
          ...(database.password === undefined ? {} : { password: database.password }),
          db: database.db,
          logger: log,
          dedupeWindowSeconds: config.dedupeWindowSeconds,
          prepareStatements: config.databasePrepareStatements,
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
          bulkPublish: config.dapr.bulkPublish,
          ...(database === undefined ? {} : { db: database.db }),
          ...(options.adoptWorkerJobDeadLetters === true && database !== undefined
            ? { adoptWorkerJobDeadLetters: true }
            : {}),
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
  const bus = telemetry.instrumentBus(
    withoutForeignSettlement(
      pick("bus", adapters.bus === "dapr" ? dapr?.bus : undefined, embedded?.bus),
      adapters,
    ),
    adapters.bus,
  );
  const timers = pick("timers", adapters.timers === "embedded" ? undefined : dapr?.timers, embedded?.timers);
  const idempotency = pick(
    "idempotency",
    adapters.idempotency === "dapr" ? dapr?.idempotency : undefined,
    embedded?.idempotency,
  );

  // Topology first: nothing the relay publishes may find its subscription missing.
  await declareStaticTopology(bus);
  const relay =
    options.outboxRelay !== false && database !== undefined
      ? await startOutboxRelay({
          db: database.db,
          connectionString: database.connectionString,
          ...(database.password === undefined ? {} : { password: database.password }),
          bus,
          logger: log,
          // On Dapr, not before the sidecar subscribed this process's topics: RabbitMQ drops a
          // message published before its subscriber's queue exists (wait-for-subscriptions.ts).
          ...(adapters.bus === "dapr" && dapr !== undefined ? { publishAfter: dapr.sidecarReady } : {}),
        })
      : undefined;
  const workflows: WorkflowEngine =
    adapters.workflow === "dapr" && config.dapr !== undefined
      ? await createWorkflowEngine(config.dapr, log)
      : createDurableTaskWorkflowEngine({ logger: log });
  log.info(
    { adapters, database: database?.kind ?? "none", outboxRelay: relay !== undefined },
    "runtime adapters",
  );
  const runtime: RuntimePlatform = {
    logger: log,
    databaseKind: database?.kind ?? "none",
    ...(database?.embeddedDataDir === undefined ? {} : { embeddedDataDir: database.embeddedDataDir }),
    adapters,
    bus,
    timers,
    idempotency,
    workflows,
    start: async () => {
      await dapr?.start();
    },
    ready: telemetry.readyWhen(dapr?.sidecarReady ?? Promise.resolve()),
    stop: async () => {
      await workflows.stop();
      await relay?.stop();
      await dapr?.stop();
      await embedded?.stop();
      await database?.close();
      await telemetry.stop();
    },
  };
  return { runtime, ...(database === undefined ? {} : { database }) };
}
