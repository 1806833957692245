import { inspect } from "node:util";
import { z } from "zod";
import {
  describeAzureCredential,
  parseAzureCredentialPlan,
  type AzureCredentialPlan,
} from "@matoolkit/platform";
import {
  azureCloud,
  azureCloudNameOf,
  azureCloudNames,
  defaultAzureCloud,
  type AzureCloudName,
} from "./azure-clouds.ts";

/**
 * A credential value read from the environment (client secret, certificate password). It prints
 * as `[redacted]` however it is logged, serialized or inspected, so a config object that reaches
 * a log line or an error by mistake carries no secret; `reveal()` is for the credential builder.
 */
export class SecretValue {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return "[redacted]";
  }
  toJSON(): string {
    return "[redacted]";
  }
  [inspect.custom](): string {
    return "[redacted]";
  }
}

/** How the worker authenticates to the target tenant's app registration (mode `entra`). */
export type EntraAuthConfig =
  | {
      readonly kind: "certificate";
      /** PEM (certificate + private key) or PFX/PKCS#12, recognised by content. */
      readonly certificatePath: string;
      readonly certificatePassword?: SecretValue;
    }
  | {
      readonly kind: "key-vault-certificate";
      readonly keyVaultUrl: string;
      readonly certificateName: string;
      /** The worker's own identity, which reads the vault (see `hostIdentity`). */
      readonly identity: AzureCredentialPlan;
    }
  | { readonly kind: "client-secret"; readonly clientSecret: SecretValue }
  | {
      readonly kind: "managed-identity";
      /** The worker's own identity, which is the tenant credential (see `hostIdentity`). */
      readonly identity: AzureCredentialPlan;
    };

export type EntraAuthKind = EntraAuthConfig["kind"];

export interface EntraTenantConfig {
  readonly mode: "entra";
  /** GUID or verified domain (contoso.onmicrosoft.com) of the target tenant. */
  readonly tenantId: string;
  /** Application (client) id of the app registration in the target tenant. */
  readonly clientId: string;
  readonly auth: EntraAuthConfig;
  /** Which Microsoft cloud the tenant lives in: authority, scopes and default endpoints. */
  readonly cloud: AzureCloudName;
  /** Overrides the cloud's Graph root (a proxy, the simulated tenant); the cloud's scope stays. */
  readonly graphBaseUrl?: string;
  /** Overrides the cloud's Exchange Online root; the cloud's token resource stays. */
  readonly exchangeBaseUrl?: string;
}

export type SimulatedTenantConfig =
  | {
      readonly mode: "simulated";
      /** A simulator already running elsewhere (`npm run simulator`). */
      readonly url: string;
      /** The cloud rehearsed: its scopes and `@odata.id` host; the simulator answers on any URL. */
      readonly cloud: AzureCloudName;
    }
  | {
      readonly mode: "simulated";
      readonly url?: undefined;
      /** Started in-process; JSON or CSV seed (see libs/simulated-tenant). */
      readonly seedPath?: string;
      /** 0: an ephemeral port. */
      readonly port: number;
      /** Share of requests answered 429 with Retry-After, 0..1. */
      readonly throttleRate: number;
      /** Undefined: the profile's (a `chaos` profile sets its own). */
      readonly replicationDelayMs: number | undefined;
      /** `chaos`: replica flapping, 404 after create, Exchange concurrency refusals. */
      readonly profile?: SimulatedTenantProfile;
      /** Seeds the simulator's random draws, so a chaos run can be reproduced. */
      readonly randomSeed?: number;
      /** When invited users accept (simulated-tenant behaviours.ts); unset: `manual`, as the service. */
      readonly inviteesRedeem?: "manual" | "at-once";
      readonly cloud: AzureCloudName;
    };

/** The simulator's profiles (libs/simulated-tenant `behaviours.ts`, simulatorProfiles). */
export const simulatedTenantProfiles = ["default", "chaos"] as const;
export type SimulatedTenantProfile = (typeof simulatedTenantProfiles)[number];

export type TenantConfig = { readonly mode: "none" } | SimulatedTenantConfig | EntraTenantConfig;
export type TenantMode = TenantConfig["mode"];

export const tenantModes = ["none", "simulated", "entra"] as const;
export const entraAuthKinds = [
  "certificate",
  "key-vault-certificate",
  "client-secret",
  "managed-identity",
] as const satisfies readonly EntraAuthKind[];

/** Every variable this file reads, so one set by mistake is named when it contradicts the mode. */
export const tenantEnvVariables = {
  mode: "MATOOLKIT_TENANT",
  tenantId: "MATOOLKIT_TENANT_ID",
  clientId: "MATOOLKIT_CLIENT_ID",
  auth: "MATOOLKIT_TENANT_AUTH",
  certificatePath: "MATOOLKIT_CLIENT_CERTIFICATE_PATH",
  certificatePassword: "MATOOLKIT_CLIENT_CERTIFICATE_PASSWORD",
  keyVaultUrl: "MATOOLKIT_KEY_VAULT_URL",
  keyVaultCertificateName: "MATOOLKIT_KEY_VAULT_CERTIFICATE_NAME",
  managedIdentityClientId: "MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID",
  clientSecret: "MATOOLKIT_CLIENT_SECRET",
  graphBaseUrl: "MATOOLKIT_GRAPH_BASE_URL",
  exchangeBaseUrl: "MATOOLKIT_EXCHANGE_BASE_URL",
  cloud: "MATOOLKIT_AZURE_CLOUD",
  simulatedUrl: "MATOOLKIT_SIMULATED_TENANT_URL",
  simulatedSeed: "MATOOLKIT_SIMULATED_TENANT_SEED",
  simulatedPort: "MATOOLKIT_SIMULATED_TENANT_PORT",
  simulatedThrottleRate: "MATOOLKIT_SIMULATED_THROTTLE_RATE",
  simulatedReplicationDelayMs: "MATOOLKIT_SIMULATED_REPLICATION_DELAY_MS",
  simulatedProfile: "MATOOLKIT_SIMULATED_PROFILE",
  simulatedRandomSeed: "MATOOLKIT_SIMULATED_RANDOM_SEED",
  simulatedInviteesRedeem: "MATOOLKIT_SIMULATED_INVITEES_REDEEM",
} as const;

const v = tenantEnvVariables;
type Variable = (typeof tenantEnvVariables)[keyof typeof tenantEnvVariables];

/** Values of these are never quoted back, even when they are wrong. */
const secretVariables: ReadonlySet<Variable> = new Set([v.clientSecret, v.certificatePassword]);

const guid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu, "must be a GUID");
const domain = z
  .string()
  .regex(
    /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/iu,
    "must be a tenant GUID or a domain such as contoso.onmicrosoft.com",
  );
const tenantId = z.union([guid, domain], {
  error: "must be a tenant GUID or a domain such as contoso.onmicrosoft.com",
});
/** https, or http to a loopback address (a local stand-in): a token must never travel in clear. */
const serviceUrl = z
  .string()
  .refine((value) => isSafeServiceUrl(value), "must be an https:// URL (http:// only to localhost)")
  .transform((value) => value.replace(/\/+$/u, ""));
const httpUrl = z
  .string()
  .refine((value) => /^https?:$/u.test(tryUrl(value)?.protocol ?? ""), "must be an http(s):// URL")
  .transform((value) => value.replace(/\/+$/u, ""));
const nonEmpty = z.string().min(1);
const optional = <T extends z.ZodType>(schema: T) => schema.optional();

const entraCommon = {
  [v.tenantId]: tenantId,
  [v.clientId]: guid,
  [v.graphBaseUrl]: optional(serviceUrl),
  [v.exchangeBaseUrl]: optional(serviceUrl),
};

/** Per auth kind: the variables it reads (required unless optional). */
export const entraAuthEnvSchemas = {
  certificate: z.object({
    ...entraCommon,
    [v.certificatePath]: nonEmpty,
    [v.certificatePassword]: optional(z.string()),
  }),
  "key-vault-certificate": z.object({
    ...entraCommon,
    [v.keyVaultUrl]: serviceUrl,
    [v.keyVaultCertificateName]: z
      .string()
      .regex(/^[0-9A-Za-z-]{1,127}$/u, "must be a Key Vault certificate name (letters, digits, '-')"),
    [v.managedIdentityClientId]: optional(guid),
  }),
  "client-secret": z.object({ ...entraCommon, [v.clientSecret]: nonEmpty }),
  "managed-identity": z.object({ ...entraCommon, [v.managedIdentityClientId]: optional(guid) }),
} as const satisfies Record<EntraAuthKind, z.ZodType>;

export const simulatedEnvSchemas = {
  running: z.object({ [v.simulatedUrl]: httpUrl }),
  inProcess: z.object({
    [v.simulatedSeed]: optional(nonEmpty),
    [v.simulatedPort]: z.coerce.number().int().min(0).max(65535).default(0),
    [v.simulatedThrottleRate]: z.coerce.number().min(0).max(1).default(0),
    [v.simulatedReplicationDelayMs]: optional(z.coerce.number().int().min(0).max(600_000)),
    [v.simulatedProfile]: optional(z.enum(simulatedTenantProfiles)),
    [v.simulatedInviteesRedeem]: optional(z.enum(["manual", "at-once"])),
    [v.simulatedRandomSeed]: optional(
      z.coerce
        .number()
        .int()
        .min(0)
        .max(2 ** 32 - 1),
    ),
  }),
};

export const tenantModeSchema = z.enum(tenantModes).default("none");
export const entraAuthKindSchema = z.enum(entraAuthKinds);

/** What configures a real tenant (MATOOLKIT_TENANT=entra); all-in-one's default tenant reads it too. */
export const entraVariables: readonly Variable[] = [
  v.tenantId,
  v.clientId,
  v.auth,
  v.certificatePath,
  v.certificatePassword,
  v.keyVaultUrl,
  v.keyVaultCertificateName,
  v.managedIdentityClientId,
  v.clientSecret,
  v.graphBaseUrl,
  v.exchangeBaseUrl,
];
/** Read in both modes that reach a tenant, so a rehearsal can use a national cloud's scopes. */
const cloudVariables: readonly Variable[] = [v.cloud];
/** What configures a simulated tenant; all-in-one's default tenant reads it too. */
export const simulatedVariables: readonly Variable[] = [
  v.simulatedUrl,
  v.simulatedSeed,
  v.simulatedPort,
  v.simulatedThrottleRate,
  v.simulatedReplicationDelayMs,
  v.simulatedProfile,
  v.simulatedRandomSeed,
  v.simulatedInviteesRedeem,
];

/**
 * For entry points: reads the target tenant's settings (unset or blank means unset) and fails
 * fast with every problem, each naming its variable; values of secret variables are never quoted.
 * A variable that the chosen mode or auth kind does not read is refused rather than ignored: a
 * client secret left beside certificate auth, or a tenant id set without `MATOOLKIT_TENANT=entra`,
 * is a mistake that would otherwise surface only at the first job.
 */
export function tenantConfigFromEnv(env: Readonly<Record<string, string | undefined>>): TenantConfig {
  const input: Partial<Record<Variable, string>> = {};
  for (const variable of Object.values(tenantEnvVariables)) {
    const raw = env[variable];
    // A password may legitimately start or end with spaces: only blank counts as unset.
    const value = secretVariables.has(variable) ? raw : raw?.trim();
    if (value !== undefined && value.trim() !== "") input[variable] = value;
  }
  const problems: string[] = [];
  const set = (variables: readonly Variable[]) => variables.filter((name) => input[name] !== undefined);
  const refuse = (variables: readonly Variable[], why: string) => {
    for (const name of set(variables)) problems.push(`${name}: ${why}`);
  };
  const parse = <T extends z.ZodType>(schema: T): z.infer<T> | undefined => {
    const parsed = schema.safeParse(input);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) problems.push(describeIssue(issue, input));
    return undefined;
  };
  const fail = (): never => {
    throw new Error(`Invalid tenant configuration: ${problems.join("; ")}`);
  };

  const mode = tenantModeSchema.safeParse(input[v.mode]);
  if (!mode.success) {
    problems.push(`${v.mode}: must be one of ${tenantModes.join(", ")}`);
    return fail();
  }

  const modeValue = mode.data;
  switch (modeValue) {
    case "none": {
      refuse(
        [...entraVariables, ...simulatedVariables, ...cloudVariables],
        `is set but ${v.mode} is "none" (set ${v.mode}=entra or simulated, or unset it)`,
      );
      return problems.length > 0 ? fail() : { mode: "none" };
    }
    case "simulated": {
      refuse(entraVariables, `is for ${v.mode}=entra, not simulated`);
      const cloud = cloudOf(input, problems);
      if (input[v.simulatedUrl] !== undefined) {
        refuse(
          simulatedVariables.filter((name) => name !== v.simulatedUrl),
          `configures an in-process simulator; ${v.simulatedUrl} uses one already running (set that one up instead)`,
        );
        const parsed = parse(simulatedEnvSchemas.running);
        if (parsed === undefined || cloud === undefined || problems.length > 0) return fail();
        return { mode: "simulated", url: parsed[v.simulatedUrl], cloud };
      }
      const parsed = parse(simulatedEnvSchemas.inProcess);
      if (parsed === undefined || cloud === undefined || problems.length > 0) return fail();
      const profile = parsed[v.simulatedProfile];
      const randomSeed = parsed[v.simulatedRandomSeed];
      const inviteesRedeem = parsed[v.simulatedInviteesRedeem];
      return {
        mode: "simulated",
        seedPath: parsed[v.simulatedSeed],
        port: parsed[v.simulatedPort],
        throttleRate: parsed[v.simulatedThrottleRate],
        // Unset: 0, unless a profile brings its own.
        replicationDelayMs: parsed[v.simulatedReplicationDelayMs] ?? (profile === undefined ? 0 : undefined),
        ...(profile === undefined ? {} : { profile }),
        ...(randomSeed === undefined ? {} : { randomSeed }),
        ...(inviteesRedeem === undefined ? {} : { inviteesRedeem }),
        cloud,
      };
    }
    case "entra": {
      refuse(simulatedVariables, `is for ${v.mode}=simulated, not entra`);
      const cloud = cloudOf(input, problems);
      const kind = entraAuthKindSchema.safeParse(input[v.auth]);
      if (!kind.success) {
        problems.push(
          `${v.auth}: ${input[v.auth] === undefined ? "is required" : "must be"} one of ${entraAuthKinds.join(", ")}`,
        );
        return fail();
      }
      const schema = entraAuthEnvSchemas[kind.data];
      const read = new Set<string>([v.mode, v.auth, v.cloud, ...Object.keys(schema.shape)]);
      refuse(
        entraVariables.filter((name) => !read.has(name)),
        `is not used with ${v.auth}=${kind.data}; unset it`,
      );
      const parsed = parse(schema) as Record<string, string | undefined> | undefined;
      if (parsed === undefined || cloud === undefined || problems.length > 0) return fail();
      const identity = hostIdentity(kind.data, parsed, env);
      if (identity !== undefined && "problems" in identity) {
        problems.push(...identity.problems);
        return fail();
      }
      if (kind.data === "managed-identity" && identity !== undefined) {
        const mismatch = authorityMismatch(identity.plan, cloud);
        if (mismatch !== undefined) {
          problems.push(mismatch);
          return fail();
        }
      }
      return {
        mode: "entra",
        tenantId: parsed[v.tenantId]!,
        clientId: parsed[v.clientId]!.toLowerCase(),
        auth: authConfig(kind.data, parsed, identity?.plan),
        cloud,
        ...(parsed[v.graphBaseUrl] === undefined ? {} : { graphBaseUrl: parsed[v.graphBaseUrl] }),
        ...(parsed[v.exchangeBaseUrl] === undefined ? {} : { exchangeBaseUrl: parsed[v.exchangeBaseUrl] }),
      };
    }
    default: {
      const unreachable: never = modeValue;
      throw new Error(`Unknown tenant mode ${String(unreachable)}`);
    }
  }
}

/**
 * MATOOLKIT_AZURE_CLOUD (default AzureCloud), matched without regard to case. A value that is no
 * cloud is quoted back with the allowed names: it is not a secret, and a typo is easiest to see.
 */
function cloudOf(input: Partial<Record<Variable, string>>, problems: string[]): AzureCloudName | undefined {
  const raw = input[v.cloud];
  if (raw === undefined) return defaultAzureCloud;
  const name = azureCloudNameOf(raw);
  if (name === undefined) {
    problems.push(
      `${v.cloud}: ${JSON.stringify(raw.slice(0, 60))} is not a cloud; use one of ${azureCloudNames.join(", ")}`,
    );
  }
  return name;
}

/**
 * With `managed-identity` auth the worker's own identity is the tenant credential, and a workload
 * identity signs in at AZURE_AUTHORITY_HOST (set by the AKS webhook): a token from another cloud's
 * Entra ID would be refused by every call, so the two must agree.
 */
function authorityMismatch(plan: AzureCredentialPlan, cloud: AzureCloudName): string | undefined {
  if (plan.kind !== "workload-identity" || plan.authorityHost === undefined) return undefined;
  const expected = new URL(azureCloud(cloud).authorityHost).host;
  const actual = tryUrl(plan.authorityHost)?.host;
  if (actual === undefined || actual.toLowerCase() === expected) return undefined;
  return `AZURE_AUTHORITY_HOST: is ${actual}, but ${v.cloud}=${cloud} signs in at ${expected}; set one to match the other`;
}

/**
 * The worker's own Azure identity, for the auth kinds that use it (reading Key Vault, or being
 * the tenant credential): the policy shared with the data sources (MATOOLKIT_AZURE_CREDENTIAL,
 * see @matoolkit/platform), with MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID as the user-assigned one.
 */
function hostIdentity(
  kind: EntraAuthKind,
  parsed: Record<string, string | undefined>,
  env: Readonly<Record<string, string | undefined>>,
): ReturnType<typeof parseAzureCredentialPlan> | undefined {
  if (kind !== "key-vault-certificate" && kind !== "managed-identity") return undefined;
  const clientId = parsed[v.managedIdentityClientId]?.toLowerCase();
  return parseAzureCredentialPlan(env, clientId === undefined ? {} : { managedIdentityClientId: clientId });
}

function authConfig(
  kind: EntraAuthKind,
  parsed: Record<string, string | undefined>,
  identity: AzureCredentialPlan | undefined,
): EntraAuthConfig {
  const host = (): { identity: AzureCredentialPlan } => {
    if (identity === undefined) throw new Error(`No host identity was resolved for ${v.auth}=${kind}`);
    return { identity };
  };
  switch (kind) {
    case "certificate": {
      const password = parsed[v.certificatePassword];
      return {
        kind,
        certificatePath: parsed[v.certificatePath]!,
        ...(password === undefined ? {} : { certificatePassword: new SecretValue(password) }),
      };
    }
    case "key-vault-certificate":
      return {
        kind,
        keyVaultUrl: parsed[v.keyVaultUrl]!,
        certificateName: parsed[v.keyVaultCertificateName]!,
        ...host(),
      };
    case "client-secret":
      return { kind, clientSecret: new SecretValue(parsed[v.clientSecret]!) };
    case "managed-identity":
      return { kind, ...host() };
    default: {
      const unreachable: never = kind;
      throw new Error(`Unknown auth kind ${String(unreachable)}`);
    }
  }
}

function describeIssue(issue: z.core.$ZodIssue, input: Partial<Record<Variable, string>>): string {
  const variable = String(issue.path[0] ?? "(tenant)");
  if (input[variable as Variable] === undefined) return `${variable}: is required`;
  // zod messages never quote the input, but say so explicitly for the secret ones.
  if (secretVariables.has(variable as Variable)) return `${variable}: is invalid`;
  return `${variable}: ${issue.message}`;
}

function tryUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

function isSafeServiceUrl(value: string): boolean {
  const url = tryUrl(value);
  if (url === undefined) return false;
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
}

/** One line for the start-up log: which tenant and how, never a secret. */
export function describeTenantConfig(config: TenantConfig): string {
  switch (config.mode) {
    case "none":
      return "no target tenant (diagnostic functions only)";
    case "simulated":
      return (
        (config.url !== undefined
          ? `simulated tenant at ${config.url}`
          : "simulated tenant (started in this process)") + cloudSuffix(config.cloud)
      );
    case "entra": {
      // Which identity of the worker's own is used, so a developer credential never goes unnoticed.
      const identity =
        "identity" in config.auth ? `, identity ${describeAzureCredential(config.auth.identity)}` : "";
      return `tenant ${config.tenantId} (app ${config.clientId}, ${config.auth.kind}${identity})${cloudSuffix(config.cloud)}`;
    }
    default: {
      const unreachable: never = config;
      throw new Error(`Unknown tenant mode ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Named only when it is not the public cloud, so the usual line stays as it was. */
export function cloudSuffix(cloud: AzureCloudName): string {
  return cloud === defaultAzureCloud ? "" : ` in ${cloud}`;
}
