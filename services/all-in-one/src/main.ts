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
  logger.info(
    { apiUrl: system.apiUrl, database: databaseKind, tenant: system.tenantChoice },
    "matoolkit is running",
  );
  const apiFlag = system.apiUrl === "http://127.0.0.1:8080" ? "" : ` --api-url ${system.apiUrl}/api`;
  const example = system.simulatedTenant ? "contoso-to-fabrikam" : "contoso-pilot";
  process.stdout.write(
    [
      "",
      `  matoolkit admin API listening on ${system.apiUrl}/api`,
      `  Dashboard: ${await dashboardLink(system.apiUrl)}`,
      `  database: ${databaseKind === "embedded" ? `embedded PostgreSQL (${embeddedDataDir ?? "data directory"})` : "DATABASE_URL"}`,
      ...tenantLines(system),
      `  try:          npx matoolkit runbook publish examples/${example}.yaml${apiFlag}`,
      "  (or curl with a token: TOKEN=$(npm run -s token -- --role Admin))",
      "",
    ].join("\n") + "\n",
  );
  return () => system.stop();
});

/** Says plainly whether anything real can be touched, and how to choose otherwise. */
function tenantLines(system: Awaited<ReturnType<typeof startAll>>): string[] {
  const target = `  worker target: ${system.tenantDescription}`;
  if (!system.simulatedTenant) return [target];
  return [
    "  simulated tenant — nothing real is touched",
    target,
    ...(system.tenantChoice === "rehearsal"
      ? ["  (no tenant configured: MATOOLKIT_TENANT=none for none, entra for a real one)"]
      : []),
    "  what changed: npx matoolkit tenant changes",
  ];
}
