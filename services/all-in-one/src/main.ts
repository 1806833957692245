// `npm start`: the whole system in one process with embedded defaults (no database server, no
// broker, no Dapr). Configuration comes from the environment; see README "Configuration".
import { runUntilSignalled } from "@matoolkit/platform";
import { startAll } from "./start-all.ts";

await runUntilSignalled("matoolkit", async () => {
  const system = await startAll(process.env);
  const { logger, databaseKind } = system.platform;
  logger.info({ apiUrl: system.apiUrl, database: databaseKind }, "matoolkit is running");
  process.stdout.write(
    [
      "",
      `  matoolkit admin API listening on ${system.apiUrl}/api`,
      `  database: ${databaseKind === "embedded" ? "embedded PostgreSQL (.matoolkit/postgres)" : "DATABASE_URL"}`,
      `  worker target: ${system.tenantDescription}`,
      "  get a token:  TOKEN=$(npm run -s token -- --role Admin)",
      `  try:          curl -H "Authorization: Bearer $TOKEN" ${system.apiUrl}/api/runbooks`,
      "",
    ].join("\n") + "\n",
  );
  return () => system.stop();
});
