// `npm start`: the whole system in one process with embedded defaults (no database server, no
// broker, no Dapr). Configuration comes from the environment; see README "Configuration".
import { runUntilSignalled } from "@matoolkit/platform";
import { startAll } from "./start-all.ts";

await runUntilSignalled("matoolkit", async () => {
  const system = await startAll(process.env);
  const { logger, databaseKind, embeddedDataDir } = system.platform;
  logger.info({ apiUrl: system.apiUrl, database: databaseKind }, "matoolkit is running");
  process.stdout.write(
    [
      "",
      `  matoolkit admin API listening on ${system.apiUrl}/api`,
      `  database: ${databaseKind === "embedded" ? `embedded PostgreSQL (${embeddedDataDir ?? "data directory"})` : "DATABASE_URL"}`,
      `  worker target: ${system.tenantDescription}`,
      `  try:          npx matoolkit runbook publish examples/contoso-pilot.yaml${system.apiUrl === "http://127.0.0.1:8080" ? "" : ` --api-url ${system.apiUrl}/api`}`,
      "  (or curl with a token: TOKEN=$(npm run -s token -- --role Admin))",
      "",
    ].join("\n") + "\n",
  );
  return () => system.stop();
});
