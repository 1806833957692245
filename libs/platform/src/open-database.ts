import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import {
  assertSchemaCurrent,
  createDb,
  directoryBlockingPostgresUser,
  migrateSchema,
  startEmbeddedPostgres,
  type DatabasePassword,
  type Db,
  type SupervisionEvent,
} from "@matoolkit/db";
import type { Logger } from "@matoolkit/runtime";
import { lazyAzureCredential } from "./azure-credential.ts";
import { entraDatabasePassword } from "./database-token.ts";
import type { PlatformConfig } from "./platform-config.ts";

export interface OpenDatabase {
  readonly db: Db;
  readonly connectionString: string;
  /** DATABASE_AUTH=entra: asked at each new connection (pools, LISTEN, pg-boss). */
  readonly password?: DatabasePassword;
  /** "embedded" when this process started its own PostgreSQL. */
  readonly kind: "server" | "embedded";
  /** Where the embedded cluster keeps its files (the data dir, or the fallback as root). */
  readonly embeddedDataDir?: string;
  close(): Promise<void>;
}

const EMBEDDED_DATABASE = "matoolkit";

/** What boot does with the schema: migrate it, check it is current, or neither (`matoolkit migrate`). */
export type SchemaOnOpen = "migrate" | "check" | "none";

/**
 * Connects to DATABASE_URL, or starts the embedded PostgreSQL in the data directory, then migrates
 * the schema or checks it is current (MATOOLKIT_MIGRATE_ON_START). Migrations run under Kysely's
 * migration lock, so several services starting at once against one server is safe; a check is
 * a read, so a service identity without DDL rights can start.
 */
export async function openDatabase(
  config: PlatformConfig,
  logger: Logger,
  applicationName: string,
  schema: SchemaOnOpen = config.migrateOnStart ? "migrate" : "check",
): Promise<OpenDatabase> {
  let connectionString = config.databaseUrl;
  let stopEmbedded: (() => Promise<void>) | undefined;
  let embeddedDataDir: string | undefined;
  if (connectionString === undefined) {
    const dataDir = embeddedClusterDir(config.dataDir, logger);
    embeddedDataDir = dataDir;
    logger.info({ dataDir, port: config.embeddedPostgresPort }, "starting embedded PostgreSQL");
    const server = await startEmbeddedPostgres({
      dataDir,
      port: config.embeddedPostgresPort,
      persistent: true,
      onLog: (line) => logger.debug({ component: "embedded-postgres" }, line.trim()),
      onSupervision: (event) => logSupervision(logger, event),
    });
    await ensureDatabase(server.adminUrl, EMBEDDED_DATABASE);
    connectionString = server.urlFor(EMBEDDED_DATABASE);
    stopEmbedded = async () => {
      await server.stop();
      logger.info({ component: "embedded-postgres" }, "embedded PostgreSQL stopped");
    };
  }
  const password = databasePasswordFor(config);
  const db = createDb({
    connectionString,
    ...(password === undefined ? {} : { password }),
    applicationName,
    maxConnections: config.databasePoolSize,
    prepareStatements: config.databasePrepareStatements,
  });
  try {
    await prepareSchema(db, schema, logger);
  } catch (error) {
    await db.destroy();
    await stopEmbedded?.();
    throw error;
  }
  return {
    db,
    connectionString,
    ...(password === undefined ? {} : { password }),
    kind: stopEmbedded === undefined ? "server" : "embedded",
    ...(embeddedDataDir === undefined ? {} : { embeddedDataDir }),
    close: async () => {
      await db.destroy();
      await stopEmbedded?.();
    },
  };
}

async function prepareSchema(db: Db, schema: SchemaOnOpen, logger: Logger): Promise<void> {
  switch (schema) {
    case "migrate": {
      const { applied } = await migrateSchema(db);
      if (applied.length > 0) logger.info({ applied }, "database migrations applied");
      return;
    }
    case "check":
      return assertSchemaCurrent(db);
    case "none":
      return;
    default: {
      const unknown: never = schema;
      throw new Error(`unknown schema action ${String(unknown)}`);
    }
  }
}

/** Passwordless PostgreSQL: tokens of the configured identity (built on the first connection). */
function databasePasswordFor(config: PlatformConfig): DatabasePassword | undefined {
  switch (config.databaseAuth) {
    case "password":
      return undefined;
    case "entra": {
      const plan = config.databaseCredential ?? {
        kind: "managed-identity" as const,
        ...(config.databaseAuthClientId === undefined ? {} : { clientId: config.databaseAuthClientId }),
      };
      return entraDatabasePassword(lazyAzureCredential(plan));
    }
    default: {
      const unknown: never = config.databaseAuth;
      throw new Error(`unknown DATABASE_AUTH ${String(unknown)}`);
    }
  }
}

/** The embedded server died and is being restarted: the pools reconnect once it is back. */
function logSupervision(logger: Logger, event: SupervisionEvent): void {
  const component = "embedded-postgres";
  switch (event.kind) {
    case "exited":
      logger.error(
        { component, reasonCode: "database.unavailable", exit: event.exit },
        "embedded PostgreSQL exited unexpectedly; restarting it",
      );
      return;
    case "restart-failed":
      // The first failures are expected (the old server's backends are still exiting); then less often.
      if (event.attempt <= 3 || event.attempt % 10 === 0)
        logger.warn(
          { component, attempt: event.attempt, reason: event.reason },
          "embedded PostgreSQL restart failed",
        );
      return;
    case "restarted":
      logger.info({ component, downMs: event.downMs }, "embedded PostgreSQL restarted");
      return;
    default: {
      const unknown: never = event;
      throw new Error(`unknown supervision event ${JSON.stringify(unknown)}`);
    }
  }
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const existing = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (existing.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}

/**
 * `<dataDir>/postgres`, unless we run as root from a directory the `postgres` OS user cannot
 * enter (a clone under /root): then a stable per-checkout directory under /var/lib/matoolkit,
 * so `npm start` works from any clone instead of failing inside initdb.
 */
function embeddedClusterDir(configured: string, logger: Logger): string {
  const preferred = resolve(join(configured, "postgres"));
  const blocked = directoryBlockingPostgresUser(preferred);
  if (blocked === undefined) return preferred;
  const fallback = join(
    "/var/lib/matoolkit",
    createHash("sha256").update(preferred).digest("hex").slice(0, 12),
    "postgres",
  );
  logger.warn(
    { preferred, blocked, dataDir: fallback },
    "the postgres user cannot reach the data directory; using a directory under /var/lib/matoolkit",
  );
  return fallback;
}
