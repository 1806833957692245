import { z } from "zod";
import { parseEnvValue, readEnv, requireEnv } from "./read-env.ts";
import type { Env } from "./read-env.ts";

const guidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Entra writes GUIDs in lowercase into `iss`, `aud` and `tid`, and claims are compared exactly.
const guid = (what: string) => z.string().regex(guidPattern, `must be ${what} GUID`).toLowerCase();
// Entra issues tokens whose `iss` carries the tenant GUID, never a domain name, so a domain here
// would make every token fail with an unhelpful 401; reject it at startup instead.
const tenantIdSchema = guid("a tenant");
const clientIdSchema = guid("the Application (client) ID");

const instanceSchema = z
  .url()
  // Issuer and JWKS URLs are built by appending the tenant, so the slash must be there exactly once.
  .transform((url) => (url.endsWith("/") ? url : `${url}/`));

// Names as they appear in the token's `scp` claim; a full `api://…/name` or `.default` never does.
const scopesSchema = z
  .string()
  .transform((text) => text.split(/[\s,]+/).filter((scope) => scope !== ""))
  .pipe(
    z.array(
      z
        .string()
        .regex(
          /^[^./][^/]*$/,
          "list scope names as they appear in the token's scp claim (e.g. access_as_user), not api://… URIs or .default",
        ),
    ),
  );

export const entraAuthConfigSchema = z.object({
  mode: z.literal("entra"),
  tenantId: tenantIdSchema,
  /** Application (client) ID of the Admin API registration: the `aud` of its v2.0 tokens. */
  clientId: clientIdSchema,
  /** Application ID URI, e.g. `api://{client-id}`: the `aud` of v1.0 tokens requested for it. */
  audience: z.string().min(1),
  /** Authority host, e.g. `https://login.microsoftonline.com/`: v2.0 issuer and JWKS URL. */
  instance: instanceSchema,
  /** `iss` of the tenant's v1.0 tokens, e.g. `https://sts.windows.net/{tenant}/`. */
  v1Issuer: z.url(),
  /** Delegated scopes that let a user's token read; empty: only app roles do. */
  scopes: z.array(z.string().min(1)),
});
export type EntraAuthConfig = z.infer<typeof entraAuthConfigSchema>;

export const defaultEntraInstance = "https://login.microsoftonline.com/";

// v1.0 tokens are issued by the cloud's STS host, not its login host (Microsoft Q&A 1190472:
// "What are the token issuers for the sovereign clouds"). Other hosts need AZURE_AD_V1_ISSUER.
const v1IssuerHostOf: Readonly<Record<string, string>> = {
  "login.microsoftonline.com": "sts.windows.net",
  "login.microsoft.com": "sts.windows.net",
  "login.windows.net": "sts.windows.net",
  "login.microsoftonline.us": "sts.windows.net",
  "login.partner.microsoftonline.cn": "sts.chinacloudapi.cn",
  "login.chinacloudapi.cn": "sts.chinacloudapi.cn",
};

/** The client id in an Application ID URI of the default form `api://{client-id}`. */
export function clientIdOfApplicationIdUri(uri: string): string | undefined {
  const candidate = /^api:\/\/([^/]+)\/?$/i.exec(uri)?.[1];
  return candidate !== undefined && guidPattern.test(candidate) ? candidate.toLowerCase() : undefined;
}

/** Reads the AZURE_AD_* variables (000 "AzureAd__*"), deriving what Entra lets us derive. */
export function entraAuthConfigFromEnv(env: Env): EntraAuthConfig {
  const tenantId = parseEnvValue(
    "AZURE_AD_TENANT_ID",
    tenantIdSchema,
    requireEnv(env, "AZURE_AD_TENANT_ID", "entra"),
  );
  const clientId = resolveClientId(env);
  const instance = parseEnvValue(
    "AZURE_AD_INSTANCE",
    instanceSchema,
    readEnv(env, "AZURE_AD_INSTANCE") ?? defaultEntraInstance,
  );
  return entraAuthConfigSchema.parse({
    mode: "entra",
    tenantId,
    clientId,
    audience: readEnv(env, "AZURE_AD_AUDIENCE") ?? `api://${clientId}`,
    instance,
    v1Issuer: resolveV1Issuer(env, instance, tenantId),
    scopes: parseEnvValue("AZURE_AD_SCOPES", scopesSchema, readEnv(env, "AZURE_AD_SCOPES") ?? ""),
  });
}

function resolveClientId(env: Env): string {
  const audience = readEnv(env, "AZURE_AD_AUDIENCE");
  const fromAudience = audience === undefined ? undefined : clientIdOfApplicationIdUri(audience);
  const given = readEnv(env, "AZURE_AD_CLIENT_ID");
  if (given === undefined) {
    if (fromAudience !== undefined) return fromAudience;
    throw new Error(
      "AZURE_AD_CLIENT_ID is required when MATOOLKIT_AUTH_MODE=entra: the Application (client) ID of the Admin API " +
        "app registration (v2.0 tokens carry it as their audience)",
    );
  }
  const clientId = parseEnvValue("AZURE_AD_CLIENT_ID", clientIdSchema, given);
  if (fromAudience !== undefined && fromAudience !== clientId) {
    throw new Error(
      `AZURE_AD_AUDIENCE ${audience} names another application than AZURE_AD_CLIENT_ID ${clientId}`,
    );
  }
  return clientId;
}

function resolveV1Issuer(env: Env, instance: string, tenantId: string): string {
  const given = readEnv(env, "AZURE_AD_V1_ISSUER");
  const example = `https://sts.windows.net/${tenantId}/`;
  if (given !== undefined) {
    const ofTenant = z.url().refine((url) => url.toLowerCase().endsWith(`/${tenantId}/`), {
      message: `must be the iss of the tenant's v1.0 tokens, ending in /${tenantId}/ (e.g. ${example})`,
    });
    return parseEnvValue("AZURE_AD_V1_ISSUER", ofTenant, given);
  }
  const host = new URL(instance).host;
  const v1Host = v1IssuerHostOf[host.toLowerCase()];
  if (v1Host === undefined) {
    throw new Error(
      `AZURE_AD_V1_ISSUER is required when AZURE_AD_INSTANCE is not a known Entra ID cloud (${host}): ` +
        `the iss of the tenant's v1.0 tokens, e.g. ${example}`,
    );
  }
  return `https://${v1Host}/${tenantId}/`;
}
