import type { Db } from "@matoolkit/db";
import {
  createEmbeddedRuntime,
  createDurableTaskWorkflowEngine,
  createLogger,
  declareStaticTopology,
  startOutboxRelay,
  type IdempotencyStore,
  type Logger,
  type MessageBus,
  type Timers,
  type WorkflowEngine,
} from "@matoolkit/runtime";
import { openDatabase } from "./open-database.ts";
import type { PlatformConfig } from "./platform-config.ts";

/**
 * What every service process stands on: a logger, the database (migrated), the runtime ports
 * filled by the configured adapter, and the outbox relay that publishes what services commit.
 * Services receive these ports and never learn which adapter is behind them.
 */
export interface Platform {
  readonly logger: Logger;
  readonly db: Db;
  readonly connectionString: string;
  readonly databaseKind: "server" | "embedded";
  readonly bus: MessageBus;
  readonly timers: Timers;
  readonly idempotency: IdempotencyStore;
  /** Durable workflows (batch progression); started by the orchestrator, which registers them. */
  readonly workflows: WorkflowEngine;
  stop(): Promise<void>;
}

export async function bootPlatform(
  config: PlatformConfig,
  processName: string,
  logger?: Logger,
): Promise<Platform> {
  const log = logger ?? createLogger({ level: config.logLevel, name: processName });
  const database = await openDatabase(config, log, processName);
  const runtime = await createEmbeddedRuntime({
    connectionString: database.connectionString,
    db: database.db,
    logger: log,
    dedupeWindowSeconds: config.dedupeWindowSeconds,
  });
  // Topology first: nothing the relay publishes may find its subscription missing.
  await declareStaticTopology(runtime.bus);
  const relay = await startOutboxRelay({
    db: database.db,
    connectionString: database.connectionString,
    bus: runtime.bus,
    logger: log,
  });
  const workflows = createDurableTaskWorkflowEngine({ logger: log });
  return {
    logger: log,
    db: database.db,
    connectionString: database.connectionString,
    databaseKind: database.kind,
    bus: runtime.bus,
    timers: runtime.timers,
    idempotency: runtime.idempotency,
    workflows,
    stop: async () => {
      await workflows.stop();
      await relay.stop();
      await runtime.stop();
      await database.close();
    },
  };
}
