import type { CliSettings } from "../config/resolve-config.ts";
import type { CliContext } from "../context.ts";
import { usageError } from "../errors.ts";
import type { EntraSettings } from "./entra/entra-session.ts";
import { localTokenSource } from "./local-token.ts";
import type { TokenSource } from "./token-source.ts";

/** The token source of the configured auth mode. Entra's module loads only in entra mode. */
export function tokenSourceFor(settings: CliSettings, stateDir: string, context: CliContext): TokenSource {
  switch (settings.authMode) {
    case "local":
      return localTokenSource({ dataDir: settings.dataDir, role: settings.role, now: context.now });
    case "entra": {
      const entra = entraSettingsOf(settings, stateDir);
      let source: Promise<TokenSource> | undefined;
      return {
        async token() {
          source ??= import("./entra/entra-session.ts").then((m) => m.entraTokenSource(entra));
          return (await source).token();
        },
      };
    }
    default: {
      const unreachable: never = settings.authMode;
      throw new Error(`Unknown auth mode ${String(unreachable)}`);
    }
  }
}

/** Entra mode needs the tenant, the CLI's app and the API's scope; the error says how to set each. */
export function entraSettingsOf(settings: CliSettings, stateDir: string): EntraSettings {
  const missing = (key: string, env: string, example: string) =>
    usageError(
      "config.missing",
      `auth-mode entra needs ${key}: \`matoolkit config set ${key} ${example}\`, ${env} or --${key}`,
    );
  if (settings.tenantId === undefined) throw missing("tenant-id", "MATOOLKIT_CLI_TENANT_ID", "<tenant-guid>");
  if (settings.clientId === undefined)
    throw missing("client-id", "MATOOLKIT_CLI_CLIENT_ID", "<cli-app-guid>");
  if (settings.apiScope === undefined)
    throw missing("api-scope", "MATOOLKIT_API_SCOPE", "api://<api-client-id>/.default");
  return {
    tenantId: settings.tenantId,
    clientId: settings.clientId,
    scope: settings.apiScope,
    authorityHost: settings.authorityHost,
    stateDir,
  };
}
