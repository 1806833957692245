import type { Logger } from "../logger.ts";
import { startOutboxRelay } from "../outbox/outbox-relay.ts";
import type { OutboxRelay, OutboxRelayOptions } from "../outbox/outbox-relay.ts";
import type { IdempotencyStore, MessageBus, Timers } from "../ports/index.ts";
import { busTuningSchema, type BusTuning } from "./bus-tuning.ts";
import { createBoss } from "./create-boss.ts";
import { installBusSchema } from "./install-bus-schema.ts";
import { createPgBossMessageBus } from "./pg-boss-message-bus.ts";
import { createPgBossTimers } from "./pg-boss-timers.ts";
import { createPostgresIdempotencyStore } from "./postgres-idempotency-store.ts";
import { startExpiredKeysSweep } from "./expired-keys-sweep.ts";

const idempotencySweepEveryMs = 5 * 60_000;
import type { AnyKysely } from "../any-kysely.ts";
import type { DatabasePassword } from "@matoolkit/db";

export interface EmbeddedRuntimeOptions extends BusTuning {
  readonly connectionString: string;
  /** Asked at each new connection instead of the URL's password (passwordless PostgreSQL). */
  readonly password?: DatabasePassword;
  /** The service's database handle (its pool): publishes, idempotency and the outbox use it. */
  readonly db: AnyKysely;
  readonly logger: Logger;
  /** Connections of pg-boss's own pool (consumer polls, completions). */
  readonly bossMaxConnections?: number;
  /** Prepared statements on pg-boss's pool (create-boss.ts); on by default. */
  readonly prepareStatements?: boolean;
}

export interface EmbeddedRuntime {
  readonly bus: MessageBus;
  readonly timers: Timers;
  readonly idempotency: IdempotencyStore;
  startOutboxRelay(options?: Pick<OutboxRelayOptions, "pollIntervalMs" | "batchSize">): Promise<OutboxRelay>;
  /** Stops relays, timers and consumers (waiting for running handlers), then pg-boss. */
  stop(): Promise<void>;
}

/**
 * Everything a service needs from the runtime, on the PostgreSQL it already uses: the bus and
 * the timers share one pg-boss (one pool, one maintenance loop per process).
 */
export async function createEmbeddedRuntime(options: EmbeddedRuntimeOptions): Promise<EmbeddedRuntime> {
  const { connectionString, db, password } = options;
  const withPassword = password === undefined ? {} : { password };
  const logger = options.logger.child({ component: "runtime" });
  await installBusSchema(connectionString, password);
  const boss = createBoss({
    connectionString,
    ...withPassword,
    maxConnections: options.bossMaxConnections,
    ...(options.prepareStatements === undefined ? {} : { prepareStatements: options.prepareStatements }),
    maintenance: true,
    maintenanceIntervalSeconds: busTuningSchema.parse(options).maintenanceIntervalSeconds,
  });
  // pg-boss emits `error` for failed maintenance or polls; unhandled, an EventEmitter error crashes.
  boss.on("error", (error) => logger.warn({ err: error }, "pg-boss error"));
  await boss.start();
  // pg-boss's own pool: a client losing its connection while checked out must not crash us either.
  (
    boss.getDb() as {
      pool?: {
        on(event: "connect", listener: (client: { on(e: "error", l: () => void): void }) => void): void;
      };
    }
  ).pool?.on("connect", (client) => client.on("error", () => {}));

  const bus = await createPgBossMessageBus({ ...options, boss, logger });
  const timers = createPgBossTimers({
    boss,
    logger,
    pollingIntervalSeconds: options.pollingIntervalSeconds,
    lockSeconds: options.lockSeconds,
  });
  const relays: OutboxRelay[] = [];
  // Idempotency keys past their memory (7 days for a worker job) read as absent; this deletes them.
  const sweep = startExpiredKeysSweep({
    db,
    keys: ["idempotency"],
    intervalMs: idempotencySweepEveryMs,
    logger,
  });

  return {
    bus,
    timers,
    idempotency: createPostgresIdempotencyStore(db),
    async startOutboxRelay(relayOptions) {
      const relay = await startOutboxRelay({
        ...relayOptions,
        db,
        bus,
        logger,
        connectionString,
        ...withPassword,
      });
      relays.push(relay);
      return relay;
    },
    async stop() {
      await Promise.all(relays.map((relay) => relay.stop()));
      await Promise.all([timers.stop(), bus.stop(), sweep.stop()]);
      await boss.stop({ graceful: false });
    },
  };
}
