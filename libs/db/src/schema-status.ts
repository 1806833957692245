import { MatoolkitError, reasonCodes } from "@matoolkit/domain";
import { Migrator, type Migration, type MigrationProvider } from "kysely";
import type { Db } from "./connection.ts";
import { migrations } from "./migrations/index.ts";

/** Static, like migrate.ts: the same list under tsx, vitest and a bundle. */
const provider: MigrationProvider = {
  getMigrations: async (): Promise<Record<string, Migration>> => migrations,
};

export interface SchemaStatus {
  /** Migrations this release knows that the database has run, in order. */
  readonly applied: readonly string[];
  /** Migrations this release knows that the database has not run yet, in order. */
  readonly pending: readonly string[];
}

/**
 * Where the database's schema stands against this release's migrations. Read-only: Kysely's
 * migration table is read (an absent table reads as nothing applied) and nothing is created, so
 * an identity without DDL rights can ask it.
 */
export async function schemaStatus(db: Db): Promise<SchemaStatus> {
  const infos = await new Migrator({ db, provider }).getMigrations();
  return {
    applied: infos.filter((info) => info.executedAt !== undefined).map((info) => info.name),
    pending: infos.filter((info) => info.executedAt === undefined).map((info) => info.name),
  };
}

/** The deploy step that brings a schema up to date (a Helm hook or a Container Apps Job runs it). */
export const MIGRATE_COMMAND = "matoolkit migrate";

/** A schema behind this release; `pending` lists every missing migration (the message may shorten). */
export class SchemaOutdatedError extends MatoolkitError {
  readonly pending: readonly string[];

  constructor(pending: readonly string[]) {
    const named = pending.length <= 3 ? pending.join(", ") : `${pending[0]} … ${pending[pending.length - 1]}`;
    super(
      reasonCodes.databaseSchemaOutdated,
      `database schema is behind: ${pending.length} pending migration(s) (${named}); run \`${MIGRATE_COMMAND}\` (npm run migrate) first, or set MATOOLKIT_MIGRATE_ON_START=true`,
      { retriable: false },
    );
    this.pending = pending;
  }
}

/**
 * Refuses a schema behind this release: a service started before its deploy's migration step
 * would otherwise fail later, mid-request, on a missing table or column.
 */
export async function assertSchemaCurrent(db: Db): Promise<void> {
  const { pending } = await schemaStatus(db);
  if (pending.length > 0) throw new SchemaOutdatedError(pending);
}

/**
 * Runs the pending migrations under Kysely's migration lock (several callers at once are safe)
 * and says which ones this call applied.
 */
export async function migrateSchema(db: Db): Promise<{ readonly applied: readonly string[] }> {
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  const failed = results?.find((result) => result.status === "Error");
  if (error !== undefined || failed !== undefined) {
    const name = failed?.migrationName ?? "unknown";
    throw new Error(
      `Database migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return {
    applied: (results ?? []).filter((result) => result.status === "Success").map((r) => r.migrationName),
  };
}
