import type { TokenCredential } from "@azure/identity";
import { describe, expect, it } from "vitest";
import {
  azureCredentialPlanFromEnv,
  createAzureCredential,
  describeAzureCredential,
  lazyAzureCredential,
  type AzureCredentialPlan,
} from "./azure-credential.ts";

const appId = "0f3c1d2e-1111-4222-8333-944455556666";
const uamiId = "11111111-2222-4333-8444-555566667777";
const tenantId = "72f988bf-86f1-41af-91ab-2d7cd011db47";
/** What the AKS workload identity webhook injects into a pod. */
const aks = {
  AZURE_CLIENT_ID: appId,
  AZURE_TENANT_ID: tenantId,
  AZURE_FEDERATED_TOKEN_FILE: "/var/run/secrets/azure/tokens/azure-identity-token",
  AZURE_AUTHORITY_HOST: "https://login.microsoftonline.com/",
};
/** What Azure Container Apps sets when the app has a managed identity. */
const aca = { IDENTITY_ENDPOINT: "http://localhost:42356/msi/token", IDENTITY_HEADER: "opaque" };

function errorOf(env: Record<string, string>, options = {}): string {
  try {
    azureCredentialPlanFromEnv(env, options);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected azureCredentialPlanFromEnv to throw");
}

async function classFor(env: Record<string, string>, options = {}): Promise<string> {
  return (await createAzureCredential(azureCredentialPlanFromEnv(env, options))).constructor.name;
}

describe("Azure credential policy", () => {
  it("uses the managed identity where the host provides one, never the developer chain", async () => {
    expect(azureCredentialPlanFromEnv(aca)).toEqual({ kind: "managed-identity" });
    expect(await classFor(aca)).toBe("ManagedIdentityCredential");
    expect(await classFor({ MSI_ENDPOINT: "http://127.0.0.1:41741/MSI/token/" })).toBe(
      "ManagedIdentityCredential",
    );
  });

  it("makes the managed identity user-assigned when AZURE_CLIENT_ID or the caller's own id names one", async () => {
    const fromAzure = await createAzureCredential(
      azureCredentialPlanFromEnv({ ...aca, AZURE_CLIENT_ID: appId }),
    );
    expect((fromAzure as unknown as { clientId?: string }).clientId).toBe(appId);

    // The worker's MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID wins, and alone (an Azure VM shows no
    // endpoint variable) it still means a managed identity rather than the developer chain.
    const plan = azureCredentialPlanFromEnv({ AZURE_CLIENT_ID: appId }, { managedIdentityClientId: uamiId });
    expect(plan).toEqual({ kind: "managed-identity", clientId: uamiId });
    const fromWorker = await createAzureCredential(plan);
    expect(fromWorker.constructor.name).toBe("ManagedIdentityCredential");
    expect((fromWorker as unknown as { clientId?: string }).clientId).toBe(uamiId);
    expect(describeAzureCredential(plan)).toBe(`managed-identity ${uamiId}`);
  });

  it("uses workload identity on AKS, with the webhook's variables passed explicitly", async () => {
    expect(azureCredentialPlanFromEnv(aks)).toEqual({
      kind: "workload-identity",
      tenantId,
      clientId: appId,
      tokenFilePath: aks.AZURE_FEDERATED_TOKEN_FILE,
      authorityHost: aks.AZURE_AUTHORITY_HOST,
    });
    expect(await classFor(aks)).toBe("WorkloadIdentityCredential");
  });

  it("uses DefaultAzureCredential only where nothing says the process is deployed", async () => {
    expect(azureCredentialPlanFromEnv({})).toEqual({ kind: "development" });
    expect(await classFor({})).toBe("DefaultAzureCredential");
  });

  it("lets MATOOLKIT_AZURE_CREDENTIAL override what the environment suggests", async () => {
    expect(await classFor({ ...aca, MATOOLKIT_AZURE_CREDENTIAL: "development" })).toBe(
      "DefaultAzureCredential",
    );
    expect(await classFor({ MATOOLKIT_AZURE_CREDENTIAL: " managed-identity " })).toBe(
      "ManagedIdentityCredential",
    );
    expect(await classFor({ ...aks, MATOOLKIT_AZURE_CREDENTIAL: "managed-identity" })).toBe(
      "ManagedIdentityCredential",
    );
    expect(await classFor({ ...aca, ...aks, MATOOLKIT_AZURE_CREDENTIAL: "workload-identity" })).toBe(
      "WorkloadIdentityCredential",
    );
  });

  it("fails at start-up naming the variable and the allowed values, without quoting the value", () => {
    const message = errorOf({ MATOOLKIT_AZURE_CREDENTIAL: "default-azure-credential" });
    expect(message).toBe(
      "Invalid Azure credential configuration: MATOOLKIT_AZURE_CREDENTIAL: must be one of managed-identity, workload-identity, development",
    );
  });

  it("names each missing workload identity variable, and why workload identity was chosen", () => {
    expect(errorOf({ MATOOLKIT_AZURE_CREDENTIAL: "workload-identity" })).toBe(
      "Invalid Azure credential configuration: " +
        "AZURE_CLIENT_ID: is required with MATOOLKIT_AZURE_CREDENTIAL=workload-identity; " +
        "AZURE_TENANT_ID: is required with MATOOLKIT_AZURE_CREDENTIAL=workload-identity; " +
        "AZURE_FEDERATED_TOKEN_FILE: is required with MATOOLKIT_AZURE_CREDENTIAL=workload-identity",
    );
    expect(errorOf({ AZURE_FEDERATED_TOKEN_FILE: "/token", AZURE_CLIENT_ID: appId })).toBe(
      "Invalid Azure credential configuration: AZURE_TENANT_ID: is required (MATOOLKIT_AZURE_CREDENTIAL is unset and AZURE_FEDERATED_TOKEN_FILE is set)",
    );
    expect(errorOf({ ...aks, AZURE_AUTHORITY_HOST: "login.microsoftonline.com" })).toContain(
      "AZURE_AUTHORITY_HOST: must be an https:// URL",
    );
    expect(errorOf({ ...aca, AZURE_CLIENT_ID: "my-identity" })).toContain("AZURE_CLIENT_ID: must be a GUID");
  });

  it("builds the credential lazily, on the first token request, once", async () => {
    const built: AzureCredentialPlan[] = [];
    let failNext = true;
    const credential = lazyAzureCredential({ kind: "managed-identity" }, async (plan) => {
      built.push(plan);
      if (failNext) {
        failNext = false;
        throw new Error("Cannot find module '@azure/identity'");
      }
      return {
        getToken: async (scopes) => ({ token: `token for ${String(scopes)}`, expiresOnTimestamp: 1 }),
      } satisfies TokenCredential;
    });
    expect(built).toEqual([]);
    // A failed build is not remembered: the next query tries again.
    await expect(credential.getToken("https://contoso.crm.dynamics.com/.default")).rejects.toThrow(
      "@azure/identity",
    );
    expect((await credential.getToken("scope-a"))?.token).toBe("token for scope-a");
    expect((await credential.getToken("scope-b"))?.token).toBe("token for scope-b");
    expect(built).toEqual([{ kind: "managed-identity" }, { kind: "managed-identity" }]);
  });
});
