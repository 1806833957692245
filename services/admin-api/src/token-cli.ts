// Mints an embedded-mode bearer token for the Admin API: `TOKEN=$(npm run -s token -- --role Admin)`.
// Prints only the token on stdout; everything else goes to stderr.
import { parseArgs } from "node:util";
import { appRoles, authConfigFromEnv, issueLocalToken } from "./auth/index.ts";
import type { AppRole } from "./auth/index.ts";
import { maxTokenTtlSeconds, parseDurationSeconds } from "./auth/parse-duration.ts";

const usage = `Usage: npm run -s token -- --role ${appRoles.join("|")} [--name alice@example.test] [--ttl 1h]
  --role   app role to grant (required): ${appRoles.join(", ")}
  --name   identity recorded as the actor (default: local-<role>)
  --ttl    lifetime: seconds or a number with s, m, h or d (default: 1h, max ${maxTokenTtlSeconds / 86_400}d)`;

class UsageError extends Error {}

interface CliOptions {
  readonly role: AppRole;
  readonly name: string;
  readonly ttlSeconds: number;
}

function parseCli(argv: string[]): CliOptions | "help" {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        role: { type: "string" },
        name: { type: "string" },
        ttl: { type: "string", default: "1h" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help) return "help";
  const role = appRoles.find((candidate) => candidate === values.role);
  if (role === undefined) {
    const given = values.role === undefined ? "--role is required" : `Invalid --role "${values.role}"`;
    throw new UsageError(`${given}: allowed values are ${appRoles.join(", ")}`);
  }
  const ttlSeconds = parseDurationSeconds(values.ttl);
  if (ttlSeconds === undefined) {
    throw new UsageError(
      `Invalid --ttl "${values.ttl}": use seconds or a number with s, m, h or d (e.g. 15m, 1h), at most ${maxTokenTtlSeconds / 86_400}d`,
    );
  }
  const name = values.name?.trim() || `local-${role.toLowerCase()}`;
  return { role, name, ttlSeconds };
}

async function main(): Promise<number> {
  let options: CliOptions | "help";
  try {
    options = parseCli(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`token: ${error.message}\n${usage}\n`);
    return 2;
  }
  if (options === "help") {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  // Checked before parsing the rest of the config so the refusal, not a missing AZURE_AD_* variable,
  // is what the user sees.
  if (process.env.MATOOLKIT_AUTH_MODE?.trim() === "entra") {
    const clientId = process.env.AZURE_AD_CLIENT_ID?.trim();
    const resource = process.env.AZURE_AD_AUDIENCE?.trim() || `api://${clientId || "<client-id>"}`;
    process.stderr.write(
      "token: MATOOLKIT_AUTH_MODE=entra, so the Admin API only accepts tokens issued by Entra ID. " +
        `Get one from Entra ID instead, e.g. \`az account get-access-token --resource ${resource} --query accessToken -o tsv\`.\n`,
    );
    return 1;
  }
  const config = authConfigFromEnv(process.env);
  if (config.mode !== "local") throw new Error(`Unexpected auth mode ${config.mode}`);
  const token = await issueLocalToken({
    dataDir: config.dataDir,
    issuer: config.issuer,
    audience: config.audience,
    roles: [options.role],
    name: options.name,
    ttlSeconds: options.ttlSeconds,
  });
  process.stdout.write(`${token}\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`token: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
