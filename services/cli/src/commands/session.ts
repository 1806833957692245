import type { Command } from "commander";
import { tokenSourceFor } from "../auth/token-source-for.ts";
import { configKeyNames, flagAttribute, type ConfigKey } from "../config/config-keys.ts";
import { configFilePath, readConfigFile, stateDirectory } from "../config/config-file.ts";
import {
  resolveConfig,
  settingsOf,
  type CliSettings,
  type ResolvedConfig,
} from "../config/resolve-config.ts";
import type { CliContext } from "../context.ts";
import { createApiClient, type ApiClient } from "../http/api-client.ts";
import { Output } from "../output/output.ts";

/** What every command works with: the resolved configuration, the output, the API client. */
export interface Session {
  readonly context: CliContext;
  readonly configPath: string;
  readonly stateDir: string;
  readonly config: ResolvedConfig;
  readonly settings: CliSettings;
  readonly output: Output;
  /** Created on first use: commands that never call the API need no key and no sign-in. */
  api(): ApiClient;
}

export async function openSession(context: CliContext, command: Command): Promise<Session> {
  const options = command.optsWithGlobals<Record<string, unknown>>();
  const flags: Partial<Record<ConfigKey, string>> = {};
  for (const key of configKeyNames) {
    const value = options[flagAttribute(key)];
    if (typeof value === "string") flags[key] = value;
  }
  const configPath = configFilePath(context.env, context.home, context.cwd);
  const config = resolveConfig({ flags, env: context.env, file: await readConfigFile(configPath) });
  const settings = settingsOf(config, context.cwd);
  const stateDir = stateDirectory(configPath);
  let client: ApiClient | undefined;
  return {
    context,
    configPath,
    stateDir,
    config,
    settings,
    output: new Output(context.stdout, options.json === true),
    api() {
      client ??= createApiClient({
        baseUrl: settings.apiUrl,
        tokens: tokenSourceFor(settings, stateDir, context),
        fetch: context.fetch,
        sleep: context.sleep,
      });
      return client;
    },
  };
}
