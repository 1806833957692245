import path from "node:path";
import { z } from "zod";
import { entraAuthConfigFromEnv, entraAuthConfigSchema } from "./entra-auth-config.ts";
import { parseEnvValue, readEnv } from "./read-env.ts";
import type { Env } from "./read-env.ts";

export const localAuthConfigSchema = z.object({
  mode: z.literal("local"),
  /** The signing key lives in `<dataDir>/auth/signing-key.json`. */
  dataDir: z.string().min(1),
  issuer: z.string().min(1).default("matoolkit-local"),
  audience: z.string().min(1).default("api://matoolkit"),
});

export { entraAuthConfigSchema };
export const authConfigSchema = z.discriminatedUnion("mode", [localAuthConfigSchema, entraAuthConfigSchema]);

export type LocalAuthConfig = z.infer<typeof localAuthConfigSchema>;
export type { EntraAuthConfig } from "./entra-auth-config.ts";
export type AuthConfig = z.infer<typeof authConfigSchema>;

export const authModes = ["local", "entra"] as const;
export type AuthMode = (typeof authModes)[number];

/** Where the embedded server and the token CLI keep their state when MATOOLKIT_DATA_DIR is unset. */
export const defaultDataDir = ".matoolkit";

/**
 * Builds the auth config from environment variables (entry points only). MATOOLKIT_AUTH_MODE
 * defaults to `local` (embedded mode with a locally generated signing key).
 */
export function authConfigFromEnv(env: Env): AuthConfig {
  const mode = readEnv(env, "MATOOLKIT_AUTH_MODE") ?? "local";
  if (mode === "local") {
    const dataDir = path.resolve(readEnv(env, "MATOOLKIT_DATA_DIR") ?? defaultDataDir);
    return parseEnvValue("MATOOLKIT_DATA_DIR", localAuthConfigSchema, { mode, dataDir });
  }
  if (mode === "entra") return entraAuthConfigFromEnv(env);
  throw new Error(`Invalid MATOOLKIT_AUTH_MODE "${mode}": allowed values are ${authModes.join(", ")}`);
}
