import { z } from "zod";
import { usageError } from "../errors.ts";
// The shared auth library, not @matoolkit/admin-api: the API's index loads express, kysely and
// every route, which would cost the CLI most of a second on every start.
import { appRoles } from "@matoolkit/auth";

const guid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const domain = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/i;

export const authModes = ["local", "entra"] as const;
export type CliAuthMode = (typeof authModes)[number];

/**
 * One setting: its validation, the environment variable and flag that override the config file,
 * and the default. Values are strings everywhere (file, env, flags), validated the same way.
 */
export interface ConfigKeyDefinition {
  readonly schema: z.ZodType<string>;
  readonly env: string;
  readonly flag: `--${string}`;
  readonly defaultValue?: string;
  readonly description: string;
}

export const configKeys = {
  "api-url": {
    schema: z.url({
      protocol: /^https?$/,
      error: "must be an http(s) URL such as http://127.0.0.1:8080/api",
    }),
    env: "MATOOLKIT_API_URL",
    flag: "--api-url",
    defaultValue: "http://127.0.0.1:8080/api",
    description: "admin API base URL, ending in /api",
  },
  "auth-mode": {
    schema: z.enum(authModes, { error: `must be one of ${authModes.join(", ")}` }),
    env: "MATOOLKIT_AUTH_MODE",
    flag: "--auth-mode",
    defaultValue: "local",
    description: "local: sign tokens with the server's local key; entra: Entra ID device-code sign-in",
  },
  "data-dir": {
    schema: z.string().trim().min(1, "must not be empty"),
    env: "MATOOLKIT_DATA_DIR",
    flag: "--data-dir",
    defaultValue: ".matoolkit",
    description: "local mode: the server's data directory (holds auth/signing-key.json); relative to the cwd",
  },
  role: {
    schema: z.enum(appRoles, { error: `must be one of ${appRoles.join(", ")}` }),
    env: "MATOOLKIT_CLI_ROLE",
    flag: "--role",
    defaultValue: "Admin",
    description: "local mode: the app role of the tokens the CLI signs",
  },
  "tenant-id": {
    schema: z.string().refine((v) => guid.test(v) || domain.test(v), "must be a tenant GUID or domain"),
    env: "MATOOLKIT_CLI_TENANT_ID",
    flag: "--tenant-id",
    description: "entra mode: the tenant to sign in to",
  },
  "client-id": {
    schema: z.string().regex(guid, "must be the application (client) GUID of the CLI's app registration"),
    env: "MATOOLKIT_CLI_CLIENT_ID",
    flag: "--client-id",
    description: "entra mode: the CLI's public client app registration",
  },
  "api-scope": {
    schema: z.string().regex(/^\S+\/\S+$/, "must be a scope such as api://<api-client-id>/.default"),
    env: "MATOOLKIT_API_SCOPE",
    flag: "--api-scope",
    description: "entra mode: scope of the admin API, e.g. api://<api-client-id>/.default",
  },
  "authority-host": {
    schema: z.url({
      protocol: /^https$/,
      error: "must be an https URL such as https://login.microsoftonline.com",
    }),
    env: "AZURE_AUTHORITY_HOST",
    flag: "--authority-host",
    defaultValue: "https://login.microsoftonline.com",
    description: "entra mode: Entra ID authority (national clouds)",
  },
} as const satisfies Record<string, ConfigKeyDefinition>;

export type ConfigKey = keyof typeof configKeys;
export const configKeyNames = Object.keys(configKeys) as ConfigKey[];

export function isConfigKey(name: string): name is ConfigKey {
  return Object.hasOwn(configKeys, name);
}

/** The commander attribute of a key's flag: `--api-url` → `apiUrl`. */
export function flagAttribute(key: ConfigKey): string {
  return key.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * Validates one value and returns it trimmed; the error names `where` it came from (a flag, a
 * variable, the file and key) so the user knows what to fix.
 */
export function validateConfigValue(key: ConfigKey, value: string, where: string): string {
  const parsed = configKeys[key].schema.safeParse(value.trim());
  if (parsed.success) return parsed.data;
  throw usageError("config.invalid", `${where}: ${parsed.error.issues[0]?.message ?? "invalid value"}`);
}
