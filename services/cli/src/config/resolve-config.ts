import path from "node:path";
import type { AppRole } from "@matoolkit/auth";
import {
  configKeyNames,
  configKeys,
  validateConfigValue,
  type CliAuthMode,
  type ConfigKey,
} from "./config-keys.ts";
import type { ConfigFileValues } from "./config-file.ts";

export type ConfigSource = "flag" | "env" | "file" | "default" | "unset";

export interface ResolvedSetting {
  readonly value: string | undefined;
  readonly source: ConfigSource;
}

export type ResolvedConfig = Readonly<Record<ConfigKey, ResolvedSetting>>;

export interface ConfigInputs {
  /** Flag values as commander parsed them (undefined when the flag was not given). */
  readonly flags: Partial<Record<ConfigKey, string | undefined>>;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly file: ConfigFileValues;
}

/**
 * 000 "Configuration Hierarchy": flag, then environment variable, then config file, then the
 * default. Every value given is validated (even one a higher source overrides), so a typo in an
 * exported variable is reported rather than lurking until the flag is dropped.
 */
export function resolveConfig(inputs: ConfigInputs): ResolvedConfig {
  const entries = configKeyNames.map((key): [ConfigKey, ResolvedSetting] => {
    const definition = configKeys[key];
    const flag = given(inputs.flags[key]);
    const env = given(inputs.env[definition.env]);
    const fromFlag = flag === undefined ? undefined : validateConfigValue(key, flag, definition.flag);
    const fromEnv = env === undefined ? undefined : validateConfigValue(key, env, definition.env);
    if (fromFlag !== undefined) return [key, { value: fromFlag, source: "flag" }];
    if (fromEnv !== undefined) return [key, { value: fromEnv, source: "env" }];
    const fromFile = inputs.file[key];
    if (fromFile !== undefined) return [key, { value: fromFile, source: "file" }];
    const fallback: string | undefined = "defaultValue" in definition ? definition.defaultValue : undefined;
    return [
      key,
      fallback === undefined ? { value: undefined, source: "unset" } : { value: fallback, source: "default" },
    ];
  });
  return Object.fromEntries(entries) as Record<ConfigKey, ResolvedSetting>;
}

/** `FOO= matoolkit …` behaves like not setting FOO (as the server treats its variables). */
function given(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}

/** The resolved configuration in the shape the commands use. */
export interface CliSettings {
  /** Without a trailing slash: paths such as `/runbooks` are appended. */
  readonly apiUrl: string;
  readonly authMode: CliAuthMode;
  /** Absolute: relative values are taken from the current directory, as `npm run token` does. */
  readonly dataDir: string;
  readonly role: AppRole;
  readonly tenantId: string | undefined;
  readonly clientId: string | undefined;
  readonly apiScope: string | undefined;
  readonly authorityHost: string;
}

export function settingsOf(config: ResolvedConfig, cwd: string): CliSettings {
  // Validated by resolveConfig; the defaults make these always present.
  const value = (key: ConfigKey) => config[key].value;
  return {
    apiUrl: (value("api-url") ?? "").replace(/\/+$/, ""),
    authMode: value("auth-mode") as CliAuthMode,
    dataDir: path.resolve(cwd, value("data-dir") ?? ""),
    role: value("role") as AppRole,
    tenantId: value("tenant-id"),
    clientId: value("client-id"),
    apiScope: value("api-scope"),
    authorityHost: value("authority-host") ?? "",
  };
}
