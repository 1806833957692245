import { Migrator, type Migration, type MigrationProvider } from "kysely";
import type { Db } from "./connection.ts";
import { migrations } from "./migrations/index.ts";

/** Migrations are imported statically so they work the same under tsx, vitest and a bundle. */
class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

export async function migrateToLatest(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === "Error");
  if (error !== undefined || failed !== undefined) {
    const name = failed?.migrationName ?? "unknown";
    throw new Error(
      `Database migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
