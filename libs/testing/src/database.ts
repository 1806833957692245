import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { createDb, type Db } from "@matoolkit/db";
import { withDatabase } from "./postgres-server.ts";

export interface TestDatabase {
  readonly url: string;
  readonly db: Db;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one test file (cloned from the run's template). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const { adminUrl, templateDatabase } = inject("testPostgres");
  // The global setup's pid prefixes every name so its teardown can sweep what a crashed file left.
  const setupPid = templateDatabase.split("_").pop() ?? "0";
  const name = `matoolkit_t${setupPid}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await createFromTemplate(admin, name, templateDatabase);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const db = createDb({ connectionString: url, maxConnections: 5, applicationName: "matoolkit-test" });
  return {
    url,
    db,
    drop: async () => {
      await db.destroy();
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

async function createFromTemplate(admin: pg.Client, name: string, template: string): Promise<void> {
  // Two files cloning at the same instant can see "source database is being accessed by other
  // users" for a moment; a short retry is enough.
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
      return;
    } catch (error) {
      if (attempt >= 20 || !String(error).includes("being accessed by other users")) throw error;
      await new Promise((resolveDelay) => setTimeout(resolveDelay, 100 * attempt));
    }
  }
}
