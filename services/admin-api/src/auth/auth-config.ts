import path from "node:path";
import { z } from "zod";

// Entra issues tokens whose `iss` carries the tenant GUID, never a domain name, so a domain here
// would make every token fail with an unhelpful 401; reject it at startup instead.
const guidSchema = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a tenant GUID");

export const localAuthConfigSchema = z.object({
  mode: z.literal("local"),
  /** The signing key lives in `<dataDir>/auth/signing-key.json`. */
  dataDir: z.string().min(1),
  issuer: z.string().min(1).default("matoolkit-local"),
  audience: z.string().min(1).default("api://matoolkit"),
});

export const entraAuthConfigSchema = z.object({
  mode: z.literal("entra"),
  tenantId: guidSchema,
  /** Application ID URI of the Admin API registration, e.g. `api://{client-id}`. */
  audience: z.string().min(1),
  instance: z
    .url()
    .default("https://login.microsoftonline.com/")
    // Issuer and JWKS URLs are built by appending the tenant, so the slash must be there exactly once.
    .transform((url) => (url.endsWith("/") ? url : `${url}/`)),
});

export const authConfigSchema = z.discriminatedUnion("mode", [localAuthConfigSchema, entraAuthConfigSchema]);

export type LocalAuthConfig = z.infer<typeof localAuthConfigSchema>;
export type EntraAuthConfig = z.infer<typeof entraAuthConfigSchema>;
export type AuthConfig = z.infer<typeof authConfigSchema>;

export const authModes = ["local", "entra"] as const;
export type AuthMode = (typeof authModes)[number];

/** Where the embedded server and the token CLI keep their state when MATOOLKIT_DATA_DIR is unset. */
export const defaultDataDir = ".matoolkit";

type Env = Record<string, string | undefined>;

/** Treats empty strings as unset: `FOO= npm start` should behave like not setting FOO. */
function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function required(env: Env, name: string, mode: AuthMode): string {
  const value = read(env, name);
  if (value === undefined) throw new Error(`${name} is required when MATOOLKIT_AUTH_MODE=${mode}`);
  return value;
}

/**
 * Builds the auth config from environment variables (entry points only). MATOOLKIT_AUTH_MODE
 * defaults to `local` (embedded mode with a locally generated signing key).
 */
export function authConfigFromEnv(env: Env): AuthConfig {
  const mode = read(env, "MATOOLKIT_AUTH_MODE") ?? "local";
  const candidate = parseMode(mode, env);
  const parsed = authConfigSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? "config");
    throw new Error(`Invalid ${envNameOf[field] ?? field}: ${issue?.message ?? "invalid value"}`);
  }
  return parsed.data;
}

function parseMode(mode: string, env: Env): unknown {
  if (mode === "local") {
    return { mode, dataDir: path.resolve(read(env, "MATOOLKIT_DATA_DIR") ?? defaultDataDir) };
  }
  if (mode === "entra") {
    return {
      mode,
      tenantId: required(env, "AZURE_AD_TENANT_ID", mode),
      audience: required(env, "AZURE_AD_AUDIENCE", mode),
      instance: read(env, "AZURE_AD_INSTANCE"),
    };
  }
  throw new Error(`Invalid MATOOLKIT_AUTH_MODE "${mode}": allowed values are ${authModes.join(", ")}`);
}

const envNameOf: Record<string, string> = {
  dataDir: "MATOOLKIT_DATA_DIR",
  tenantId: "AZURE_AD_TENANT_ID",
  audience: "AZURE_AD_AUDIENCE",
  instance: "AZURE_AD_INSTANCE",
};
