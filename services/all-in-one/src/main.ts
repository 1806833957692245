// `npm start`: the whole system in one process with embedded defaults (no database server, no
// broker, no Dapr). Configuration comes from the environment; see README "Configuration".
import { authConfigFromEnv, issueLocalToken } from "@matoolkit/admin-api";
import { runUntilSignalled } from "@matoolkit/platform";
import { startAll } from "./start-all.ts";

/** How long the banner's dashboard sign-in link works (a working day); `npm run token` makes more. */
const DASHBOARD_LINK_TTL_SECONDS = 8 * 3600;

/**
 * Local mode: a link that signs the browser in as Admin. The token is in the URL fragment, which
 * browsers never send, so no server or proxy log records it; the dashboard moves it into the
 * tab's session storage and removes it from the address bar. Entra mode: the plain URL (the
 * dashboard signs in with Entra ID).
 */
async function dashboardLink(apiUrl: string): Promise<string> {
  const auth = authConfigFromEnv(process.env);
  if (auth.mode !== "local") return `${apiUrl}/`;
  // Only to a terminal: where stdout is a log (a container, a service manager, a pipe), an Admin
  // token in it would be a leaked credential. There, sign in with a token made on demand.
  if (process.stdout.isTTY !== true)
    return `${apiUrl}/ (sign in with a token: npm run -s token -- --role Admin)`;
  const token = await issueLocalToken({
    dataDir: auth.dataDir,
    issuer: auth.issuer,
    audience: auth.audience,
    roles: ["Admin"],
    name: "local-Admin",
    ttlSeconds: DASHBOARD_LINK_TTL_SECONDS,
  });
  return `${apiUrl}/#token=${token}`;
}

await runUntilSignalled("matoolkit", async () => {
  const system = await startAll(process.env);
  const { logger, databaseKind, embeddedDataDir } = system.platform;
  logger.info({ apiUrl: system.apiUrl, database: databaseKind }, "matoolkit is running");
  process.stdout.write(
    [
      "",
      `  matoolkit admin API listening on ${system.apiUrl}/api`,
      `  Dashboard: ${await dashboardLink(system.apiUrl)}`,
      `  database: ${databaseKind === "embedded" ? `embedded PostgreSQL (${embeddedDataDir ?? "data directory"})` : "DATABASE_URL"}`,
      `  worker target: ${system.tenantDescription}`,
      `  try:          npx matoolkit runbook publish examples/contoso-pilot.yaml${system.apiUrl === "http://127.0.0.1:8080" ? "" : ` --api-url ${system.apiUrl}/api`}`,
      "  (or curl with a token: TOKEN=$(npm run -s token -- --role Admin))",
      "",
    ].join("\n") + "\n",
  );
  return () => system.stop();
});
