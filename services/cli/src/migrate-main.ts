// Entry point of `matoolkit migrate` (the image's `migrate` command, `npm run migrate`): brings the
// schema of DATABASE_URL up to this release's migrations and exits, once per deploy (a Helm
// pre-install/pre-upgrade hook Job, an ACA Container Apps Job). The services then start with
// MATOOLKIT_MIGRATE_ON_START=false and only check the schema; only this step needs DDL rights.
import { migrateSchema, schemaStatus } from "@matoolkit/db";
import { openDatabase, platformConfigFromEnv } from "@matoolkit/platform";
import { createLogger } from "@matoolkit/runtime";

async function migrate(env: Record<string, string | undefined>): Promise<void> {
  const config = platformConfigFromEnv(env);
  if (config.databaseUrl === undefined) {
    // The embedded database migrates itself at start; a migration step is for a shared server.
    throw new Error("DATABASE_URL is not set: migrate runs against a PostgreSQL server");
  }
  const logger = createLogger({ level: config.logLevel, name: "migrate" });
  // Connects as the platform does (DATABASE_AUTH=entra: a token of the managed identity).
  const database = await openDatabase(config, logger, "matoolkit-migrate", "none");
  try {
    const { applied } = await migrateSchema(database.db);
    const status = await schemaStatus(database.db);
    logger.info(
      { applied, current: status.applied.at(-1) ?? null },
      applied.length === 0 ? "schema already current" : `applied ${applied.length} migration(s)`,
    );
  } finally {
    await database.close();
  }
}

try {
  // eslint-disable-next-line no-restricted-properties -- an entry point, like the main.ts files
  await migrate(process.env);
  process.exitCode = 0;
} catch (error) {
  // Never the URL (it may hold a password): the messages name variables and migrations only.
  process.stderr.write(`migrate: failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
