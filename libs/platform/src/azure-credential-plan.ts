import { z } from "zod";

/**
 * Which Azure identity this process uses for Azure resources (Dataverse, Databricks, Key Vault,
 * the worker's `managed-identity` tenant auth). DefaultAzureCredential tries environment
 * variables, workload identity, managed identity, then developer sign-ins (Azure CLI, azd,
 * PowerShell) in turn: in production that can silently run as whoever signed in on the host, so
 * it is only the default where no managed identity is visible.
 */
export const azureCredentialKinds = ["managed-identity", "workload-identity", "development"] as const;
export type AzureCredentialKind = (typeof azureCredentialKinds)[number];

/** What the credential is built from: validated at start-up, so a mistake stops the process. */
export type AzureCredentialPlan =
  /** ManagedIdentityCredential; `clientId`: a user-assigned identity, absent: the system-assigned one. */
  | { readonly kind: "managed-identity"; readonly clientId?: string }
  /** WorkloadIdentityCredential (AKS): the federated service-account token exchanged for the app's token. */
  | {
      readonly kind: "workload-identity";
      readonly tenantId: string;
      readonly clientId: string;
      readonly tokenFilePath: string;
      readonly authorityHost?: string;
    }
  /** DefaultAzureCredential (a developer's machine); `clientId` is the managed identity it may try. */
  | { readonly kind: "development"; readonly clientId?: string };

export const azureCredentialEnvVariables = {
  kind: "MATOOLKIT_AZURE_CREDENTIAL",
  clientId: "AZURE_CLIENT_ID",
  tenantId: "AZURE_TENANT_ID",
  tokenFile: "AZURE_FEDERATED_TOKEN_FILE",
  authorityHost: "AZURE_AUTHORITY_HOST",
  /** Set by Azure Container Apps and App Service when the app has a managed identity. */
  identityEndpoint: "IDENTITY_ENDPOINT",
  msiEndpoint: "MSI_ENDPOINT",
} as const;
const v = azureCredentialEnvVariables;

export interface AzureCredentialOptions {
  /**
   * A user-assigned identity named by the caller's own variable (the worker's
   * MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID, already validated): it wins over AZURE_CLIENT_ID, and
   * naming one means a managed identity is wanted even where no endpoint variable shows (a VM).
   */
  readonly managedIdentityClientId?: string;
}

const guid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu;
const kindSchema = z.enum(azureCredentialKinds);

/** The plan, or every problem found, each naming its variable and never quoting its value. */
export function parseAzureCredentialPlan(
  env: Readonly<Record<string, string | undefined>>,
  options: AzureCredentialOptions = {},
): { readonly plan: AzureCredentialPlan } | { readonly problems: readonly string[] } {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === "" ? undefined : value;
  };
  const problems: string[] = [];
  const requested = read(v.kind);
  const parsedKind = kindSchema.safeParse(requested ?? defaultKind(read, options));
  if (!parsedKind.success)
    return { problems: [`${v.kind}: must be one of ${azureCredentialKinds.join(", ")}`] };

  const azureClientId = read(v.clientId);
  if (azureClientId !== undefined && !guid.test(azureClientId))
    problems.push(`${v.clientId}: must be a GUID`);
  const clientId = options.managedIdentityClientId ?? azureClientId;
  const kind = parsedKind.data;
  let plan: AzureCredentialPlan;
  switch (kind) {
    case "managed-identity":
    case "development":
      plan = { kind, ...(clientId === undefined ? {} : { clientId }) };
      break;
    case "workload-identity": {
      const tenantId = read(v.tenantId);
      const tokenFilePath = read(v.tokenFile);
      const authorityHost = read(v.authorityHost);
      const missing = [
        ...(clientId === undefined ? [v.clientId] : []),
        ...(tenantId === undefined ? [v.tenantId] : []),
        ...(tokenFilePath === undefined ? [v.tokenFile] : []),
      ];
      // When the kind was inferred, say from what: the operator never typed "workload-identity".
      const why =
        requested === undefined
          ? `(${v.kind} is unset and ${v.tokenFile} is set)`
          : `with ${v.kind}=workload-identity`;
      for (const name of missing) problems.push(`${name}: is required ${why}`);
      if (authorityHost !== undefined && !authorityHost.startsWith("https://")) {
        problems.push(`${v.authorityHost}: must be an https:// URL`);
      }
      plan = {
        kind,
        tenantId: tenantId ?? "",
        clientId: clientId ?? "",
        tokenFilePath: tokenFilePath ?? "",
        ...(authorityHost === undefined ? {} : { authorityHost }),
      };
      break;
    }
    default: {
      const unreachable: never = kind;
      throw new Error(`Unknown Azure credential kind ${String(unreachable)}`);
    }
  }
  return problems.length > 0 ? { problems } : { plan };
}

/** Unset: the identity the host provides, else the developer's chain. */
function defaultKind(
  read: (name: string) => string | undefined,
  options: AzureCredentialOptions,
): AzureCredentialKind {
  if (read(v.identityEndpoint) !== undefined || read(v.msiEndpoint) !== undefined) return "managed-identity";
  if (read(v.tokenFile) !== undefined) return "workload-identity";
  if (options.managedIdentityClientId !== undefined) return "managed-identity";
  return "development";
}

/** For entry points: the plan, or a start-up error naming every variable at fault. */
export function azureCredentialPlanFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: AzureCredentialOptions = {},
): AzureCredentialPlan {
  const result = parseAzureCredentialPlan(env, options);
  if ("problems" in result)
    throw new Error(`Invalid Azure credential configuration: ${result.problems.join("; ")}`);
  return result.plan;
}
