import pg from "pg";
import type { TestProject } from "vitest/node";
import { createDb, migrateToLatest } from "@matoolkit/db";
import { installBusSchema } from "@matoolkit/runtime";
import { startTestPostgresServer, withDatabase } from "./postgres-server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    testPostgres: { adminUrl: string; templateDatabase: string; kind: string };
  }
}

/**
 * Starts one PostgreSQL for the run and migrates a template database once (our schema and the
 * message bus schema); every test file then clones its own database from it (see database.ts),
 * the graphile-worker way: isolation without paying for migrations per file.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestPostgresServer(process.env);
  const templateDatabase = `matoolkit_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${templateDatabase}`);
  await admin.query(`CREATE DATABASE ${templateDatabase}`);
  const templateUrl = withDatabase(server.adminUrl, templateDatabase);
  const db = createDb({ connectionString: templateUrl, maxConnections: 2 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  await installBusSchema(templateUrl);
  project.provide("testPostgres", { adminUrl: server.adminUrl, templateDatabase, kind: server.kind });
  console.log(`[tests] PostgreSQL: ${server.kind}`);
  return async () => {
    const leftovers = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE $1",
      [`matoolkit_t${process.pid}_%`],
    );
    for (const row of leftovers.rows)
      await admin.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`);
    await admin.query(`DROP DATABASE IF EXISTS ${templateDatabase} WITH (FORCE)`);
    await admin.end();
    await server.stop();
  };
}
