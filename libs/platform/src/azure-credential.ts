import type { AccessToken, GetTokenOptions, TokenCredential } from "@azure/identity";
import type { AzureCredentialPlan } from "./azure-credential-plan.ts";

export * from "./azure-credential-plan.ts";

/** One line for the start-up log: the kind and the identity, never a token or a path's content. */
export function describeAzureCredential(plan: AzureCredentialPlan): string {
  const who = plan.kind === "development" || plan.clientId === undefined ? "" : ` ${plan.clientId}`;
  return `${plan.kind}${who}`;
}

/**
 * Builds the credential. @azure/identity (MSAL) is imported here, on first use: deployments that
 * never reach Azure (postgres or csv sources, simulated tenant) never load it.
 */
export async function createAzureCredential(plan: AzureCredentialPlan): Promise<TokenCredential> {
  const identity = await import("@azure/identity");
  switch (plan.kind) {
    case "managed-identity":
      return plan.clientId === undefined
        ? new identity.ManagedIdentityCredential()
        : new identity.ManagedIdentityCredential({ clientId: plan.clientId });
    case "workload-identity":
      return new identity.WorkloadIdentityCredential({
        tenantId: plan.tenantId,
        clientId: plan.clientId,
        tokenFilePath: plan.tokenFilePath,
        ...(plan.authorityHost === undefined ? {} : { authorityHost: plan.authorityHost }),
      });
    case "development":
      return new identity.DefaultAzureCredential(
        plan.clientId === undefined ? {} : { managedIdentityClientId: plan.clientId },
      );
    default: {
      const unreachable: never = plan;
      throw new Error(`Unknown Azure credential plan ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * A TokenCredential that builds the planned one on its first getToken (see createAzureCredential),
 * for the data sources, which must not load @azure/identity until a Dataverse or Databricks query runs.
 */
export function lazyAzureCredential(
  plan: AzureCredentialPlan,
  create: (plan: AzureCredentialPlan) => Promise<TokenCredential> = createAzureCredential,
): TokenCredential {
  let credential: Promise<TokenCredential> | undefined;
  return {
    async getToken(scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null> {
      credential ??= create(plan).catch((error: unknown) => {
        credential = undefined; // a failed import or constructor is retried by the next query
        throw error;
      });
      return (await credential).getToken(scopes, options);
    },
  };
}
