import {
  defaultStatementCachePolicy,
  pgConnectionConfig,
  statementCachingClient,
  type DatabasePassword,
} from "@matoolkit/db";
import PgBoss from "pg-boss";
import { bossSchema } from "./bus-tables.ts";

export interface CreateBossOptions {
  readonly connectionString: string;
  readonly password?: DatabasePassword;
  /** pg-boss keeps its own small pool: consumers poll through it, publishes use the caller's db. */
  readonly maxConnections?: number;
  /** Run pg-boss maintenance (expire stale locks, archive, purge) in this process. */
  readonly maintenance: boolean;
  /** How often maintenance may run (one process at a time does it); bounds crash recovery. */
  readonly maintenanceIntervalSeconds?: number;
  /**
   * pg-boss's fetch and completions prepared on its connections, as the services' own pool does
   * (DatabaseOptions.prepareStatements, statement-cache.ts); on by default.
   */
  readonly prepareStatements?: boolean;
}

export function createBoss(options: CreateBossOptions): PgBoss {
  return new PgBoss({
    // pg-boss hands these to pg.Pool, which asks a password function at every new connection.
    ...(pgConnectionConfig(options.connectionString, options.password) as PgBoss.ConstructorOptions),
    // pg-boss hands its whole configuration to pg.Pool, whose `Client` option this is.
    ...(options.prepareStatements === false
      ? {}
      : { Client: statementCachingClient(defaultStatementCachePolicy) }),
    max: options.maxConnections ?? 5,
    application_name: "matoolkit-bus",
    schema: bossSchema,
    migrate: true,
    // Cron is not used: its monitor runs every 30 s at best with minute granularity, too coarse
    // for sub-minute timers (see pg-boss-timers.ts), and it would start an internal worker.
    schedule: false,
    supervise: options.maintenance,
    maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 60,
  });
}
