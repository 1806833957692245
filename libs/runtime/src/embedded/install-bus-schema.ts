import { pgConnectionConfig, type DatabasePassword } from "@matoolkit/db";
import pg from "pg";
import { installBusTables } from "./bus-tables.ts";
import { createBoss } from "./create-boss.ts";

/**
 * Installs or migrates the message bus storage (pg-boss's `pgboss` schema and our
 * `matoolkit_bus` tables), then disconnects. Safe to run from several processes at once: pg-boss
 * takes an advisory lock for its migrations, and so do we. The test harness runs it once on the
 * template database; the embedded runtime runs it at every start.
 */
export async function installBusSchema(connectionString: string, password?: DatabasePassword): Promise<void> {
  const boss = createBoss({
    connectionString,
    ...(password === undefined ? {} : { password }),
    maxConnections: 1,
    maintenance: false,
  });
  let failure: unknown;
  boss.on("error", (error) => {
    failure ??= error;
  });
  await boss.start();
  await boss.stop({ graceful: false });
  if (failure !== undefined) throw failure;

  const client = new pg.Client({
    ...pgConnectionConfig(connectionString, password),
    application_name: "matoolkit-bus-install",
  });
  await client.connect();
  try {
    await installBusTables(client);
  } finally {
    await client.end();
  }
}
