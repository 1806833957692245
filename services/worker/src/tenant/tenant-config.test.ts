import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  describeTenantConfig,
  SecretValue,
  tenantConfigFromEnv,
  type TenantConfig,
} from "./tenant-config.ts";

const tenantGuid = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const clientGuid = "0F3C1D2E-1111-4222-8333-944455556666";
const entra = {
  MATOOLKIT_TENANT: "entra",
  MATOOLKIT_TENANT_ID: tenantGuid,
  MATOOLKIT_CLIENT_ID: clientGuid,
};

function errorOf(env: Record<string, string | undefined>): string {
  try {
    tenantConfigFromEnv(env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected tenantConfigFromEnv to throw");
}

describe("tenantConfigFromEnv", () => {
  it("defaults to no tenant, blank counting as unset", () => {
    expect(tenantConfigFromEnv({})).toEqual({ mode: "none" });
    expect(tenantConfigFromEnv({ MATOOLKIT_TENANT: " ", MATOOLKIT_CLIENT_SECRET: "" })).toEqual({
      mode: "none",
    });
  });

  it("refuses an unknown mode, naming the variable", () => {
    expect(errorOf({ MATOOLKIT_TENANT: "azure" })).toMatch(
      /MATOOLKIT_TENANT: must be one of none, simulated, entra/,
    );
  });

  it("refuses tenant variables set while the mode is none (a forgotten MATOOLKIT_TENANT)", () => {
    const message = errorOf({ MATOOLKIT_TENANT_ID: tenantGuid, MATOOLKIT_SIMULATED_TENANT_PORT: "1" });
    expect(message).toContain("MATOOLKIT_TENANT_ID: is set but MATOOLKIT_TENANT is");
    expect(message).toContain("MATOOLKIT_SIMULATED_TENANT_PORT");
  });

  describe("entra", () => {
    it("reads certificate auth, keeping the password out of every rendering", () => {
      const config = tenantConfigFromEnv({
        ...entra,
        MATOOLKIT_TENANT_AUTH: "certificate",
        MATOOLKIT_CLIENT_CERTIFICATE_PATH: " /secrets/app.pfx ",
        MATOOLKIT_CLIENT_CERTIFICATE_PASSWORD: " p@ss word ",
        MATOOLKIT_GRAPH_BASE_URL: "https://graph.microsoft.us/",
      });
      expect(config).toMatchObject({
        mode: "entra",
        tenantId: tenantGuid,
        clientId: clientGuid.toLowerCase(),
        graphBaseUrl: "https://graph.microsoft.us",
        auth: { kind: "certificate", certificatePath: "/secrets/app.pfx" },
      });
      const auth = (config as Extract<TenantConfig, { mode: "entra" }>).auth;
      if (auth.kind !== "certificate") throw new Error("certificate auth expected");
      // Spaces are part of a password.
      expect(auth.certificatePassword?.reveal()).toBe(" p@ss word ");
      expect(JSON.stringify(config)).not.toContain("p@ss");
      expect(inspect(config, { depth: 10 })).not.toContain("p@ss");
      expect(`${String(auth.certificatePassword)}`).toBe("[redacted]");
      expect(describeTenantConfig(config)).toBe(
        `tenant ${tenantGuid} (app ${clientGuid.toLowerCase()}, certificate)`,
      );
    });

    it("accepts a domain as tenant id and reads Key Vault certificate auth", () => {
      const config = tenantConfigFromEnv({
        ...entra,
        MATOOLKIT_TENANT_ID: "fabrikam.onmicrosoft.com",
        MATOOLKIT_TENANT_AUTH: "key-vault-certificate",
        MATOOLKIT_KEY_VAULT_URL: "https://matoolkit-kv.vault.azure.net/",
        MATOOLKIT_KEY_VAULT_CERTIFICATE_NAME: "fabrikam-migration",
        MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID: "11111111-2222-4333-8444-555566667777",
      });
      expect(config).toEqual({
        mode: "entra",
        tenantId: "fabrikam.onmicrosoft.com",
        clientId: clientGuid.toLowerCase(),
        cloud: "AzureCloud",
        auth: {
          kind: "key-vault-certificate",
          keyVaultUrl: "https://matoolkit-kv.vault.azure.net",
          certificateName: "fabrikam-migration",
          // No endpoint variable (a VM), but a user-assigned identity is named: a managed identity.
          identity: { kind: "managed-identity", clientId: "11111111-2222-4333-8444-555566667777" },
        },
      });
    });

    it("chooses the worker's own identity by MATOOLKIT_AZURE_CREDENTIAL and says which", () => {
      const onAca = tenantConfigFromEnv({
        ...entra,
        MATOOLKIT_TENANT_AUTH: "managed-identity",
        IDENTITY_ENDPOINT: "http://localhost:42356/msi/token",
      });
      expect(onAca).toMatchObject({
        auth: { kind: "managed-identity", identity: { kind: "managed-identity" } },
      });
      expect(describeTenantConfig(onAca)).toBe(
        `tenant ${tenantGuid} (app ${clientGuid.toLowerCase()}, managed-identity, identity managed-identity)`,
      );
      const laptop = tenantConfigFromEnv({
        ...entra,
        MATOOLKIT_TENANT_AUTH: "key-vault-certificate",
        MATOOLKIT_KEY_VAULT_URL: "https://matoolkit-kv.vault.azure.net/",
        MATOOLKIT_KEY_VAULT_CERTIFICATE_NAME: "fabrikam-migration",
      });
      expect(describeTenantConfig(laptop)).toBe(
        `tenant ${tenantGuid} (app ${clientGuid.toLowerCase()}, key-vault-certificate, identity development)`,
      );
    });

    it("refuses an unknown MATOOLKIT_AZURE_CREDENTIAL where the worker's identity is used", () => {
      const message = errorOf({
        ...entra,
        MATOOLKIT_TENANT_AUTH: "managed-identity",
        MATOOLKIT_AZURE_CREDENTIAL: "az-login",
      });
      expect(message).toBe(
        "Invalid tenant configuration: MATOOLKIT_AZURE_CREDENTIAL: must be one of managed-identity, workload-identity, development",
      );
    });

    it("reads client-secret and managed-identity auth", () => {
      const secret = tenantConfigFromEnv({
        ...entra,
        MATOOLKIT_TENANT_AUTH: "client-secret",
        MATOOLKIT_CLIENT_SECRET: "s3cr3t~value",
      });
      expect(secret).toMatchObject({ auth: { kind: "client-secret" } });
      expect(JSON.stringify(secret)).not.toContain("s3cr3t");
      expect(tenantConfigFromEnv({ ...entra, MATOOLKIT_TENANT_AUTH: "managed-identity" })).toMatchObject({
        auth: { kind: "managed-identity", identity: { kind: "development" } },
      });
    });

    it.each([
      [{ MATOOLKIT_TENANT_AUTH: undefined }, "MATOOLKIT_TENANT_AUTH: is required one of certificate"],
      [{ MATOOLKIT_TENANT_AUTH: "password" }, "MATOOLKIT_TENANT_AUTH: must be one of"],
      [
        { MATOOLKIT_TENANT_AUTH: "managed-identity", MATOOLKIT_TENANT_ID: undefined },
        "MATOOLKIT_TENANT_ID: is required",
      ],
      [
        { MATOOLKIT_TENANT_AUTH: "managed-identity", MATOOLKIT_TENANT_ID: "not a tenant" },
        "MATOOLKIT_TENANT_ID: must be a tenant GUID or a domain",
      ],
      [
        { MATOOLKIT_TENANT_AUTH: "managed-identity", MATOOLKIT_CLIENT_ID: "my-app" },
        "MATOOLKIT_CLIENT_ID: must be a GUID",
      ],
      [{ MATOOLKIT_TENANT_AUTH: "certificate" }, "MATOOLKIT_CLIENT_CERTIFICATE_PATH: is required"],
      [{ MATOOLKIT_TENANT_AUTH: "client-secret" }, "MATOOLKIT_CLIENT_SECRET: is required"],
      [{ MATOOLKIT_TENANT_AUTH: "key-vault-certificate" }, "MATOOLKIT_KEY_VAULT_URL: is required"],
      [
        {
          MATOOLKIT_TENANT_AUTH: "key-vault-certificate",
          MATOOLKIT_KEY_VAULT_URL: "http://kv.vault.azure.net",
          MATOOLKIT_KEY_VAULT_CERTIFICATE_NAME: "x",
        },
        "MATOOLKIT_KEY_VAULT_URL: must be an https:// URL",
      ],
      [
        { MATOOLKIT_TENANT_AUTH: "managed-identity", MATOOLKIT_EXCHANGE_BASE_URL: "outlook" },
        "MATOOLKIT_EXCHANGE_BASE_URL: must be an https:// URL",
      ],
      [
        { MATOOLKIT_TENANT_AUTH: "managed-identity", MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID: "mi" },
        "MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID: must be a GUID",
      ],
    ])("fails naming the variable at fault (%j)", (overrides, expected) => {
      expect(errorOf({ ...entra, ...overrides })).toContain(expected);
    });

    it("refuses variables of another auth kind or of the simulator, never quoting a secret", () => {
      const message = errorOf({
        ...entra,
        MATOOLKIT_TENANT_AUTH: "certificate",
        MATOOLKIT_CLIENT_CERTIFICATE_PATH: "/secrets/app.pem",
        MATOOLKIT_CLIENT_SECRET: "s3cr3t~value",
        MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID: "11111111-2222-4333-8444-555566667777",
        MATOOLKIT_SIMULATED_TENANT_URL: "http://127.0.0.1:8090",
      });
      expect(message).toContain(
        "MATOOLKIT_CLIENT_SECRET: is not used with MATOOLKIT_TENANT_AUTH=certificate",
      );
      expect(message).toContain("MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID: is not used");
      expect(message).toContain("MATOOLKIT_SIMULATED_TENANT_URL: is for MATOOLKIT_TENANT=simulated");
      expect(message).not.toContain("s3cr3t");
    });

    it("allows http base URLs only to loopback (a local stand-in)", () => {
      expect(
        tenantConfigFromEnv({
          ...entra,
          MATOOLKIT_TENANT_AUTH: "managed-identity",
          MATOOLKIT_GRAPH_BASE_URL: "http://127.0.0.1:9999",
        }),
      ).toMatchObject({ graphBaseUrl: "http://127.0.0.1:9999" });
      expect(
        errorOf({
          ...entra,
          MATOOLKIT_TENANT_AUTH: "managed-identity",
          MATOOLKIT_GRAPH_BASE_URL: "http://graph.example",
        }),
      ).toContain("MATOOLKIT_GRAPH_BASE_URL");
    });
  });

  describe("simulated", () => {
    it("starts one in-process with defaults, or reads its settings", () => {
      expect(tenantConfigFromEnv({ MATOOLKIT_TENANT: "simulated" })).toEqual({
        mode: "simulated",
        seedPath: undefined,
        port: 0,
        throttleRate: 0,
        replicationDelayMs: 0,
        cloud: "AzureCloud",
      });
      expect(
        tenantConfigFromEnv({
          MATOOLKIT_TENANT: "simulated",
          MATOOLKIT_SIMULATED_TENANT_SEED: "examples/fabrikam-tenant.json",
          MATOOLKIT_SIMULATED_TENANT_PORT: "8090",
          MATOOLKIT_SIMULATED_THROTTLE_RATE: "0.25",
          MATOOLKIT_SIMULATED_REPLICATION_DELAY_MS: "1500",
        }),
      ).toEqual({
        mode: "simulated",
        seedPath: "examples/fabrikam-tenant.json",
        port: 8090,
        throttleRate: 0.25,
        replicationDelayMs: 1500,
        cloud: "AzureCloud",
      });
    });

    it("selects a profile and a random seed; the profile's replication delay unless one is set", () => {
      expect(
        tenantConfigFromEnv({
          MATOOLKIT_TENANT: "simulated",
          MATOOLKIT_SIMULATED_PROFILE: "chaos",
          MATOOLKIT_SIMULATED_RANDOM_SEED: "42",
        }),
      ).toEqual({
        mode: "simulated",
        seedPath: undefined,
        port: 0,
        throttleRate: 0,
        replicationDelayMs: undefined,
        profile: "chaos",
        randomSeed: 42,
        cloud: "AzureCloud",
      });
      expect(
        tenantConfigFromEnv({
          MATOOLKIT_TENANT: "simulated",
          MATOOLKIT_SIMULATED_PROFILE: "chaos",
          MATOOLKIT_SIMULATED_REPLICATION_DELAY_MS: "100",
        }),
      ).toMatchObject({ profile: "chaos", replicationDelayMs: 100 });
    });

    it("connects to a running simulator", () => {
      expect(
        tenantConfigFromEnv({
          MATOOLKIT_TENANT: "simulated",
          MATOOLKIT_SIMULATED_TENANT_URL: "http://127.0.0.1:8090/",
        }),
      ).toEqual({ mode: "simulated", url: "http://127.0.0.1:8090", cloud: "AzureCloud" });
    });

    it.each([
      ["MATOOLKIT_SIMULATED_THROTTLE_RATE", "1.5"],
      ["MATOOLKIT_SIMULATED_TENANT_PORT", "70000"],
      ["MATOOLKIT_SIMULATED_REPLICATION_DELAY_MS", "-1"],
      ["MATOOLKIT_SIMULATED_PROFILE", "mayhem"],
      ["MATOOLKIT_SIMULATED_RANDOM_SEED", "1.5"],
      ["MATOOLKIT_SIMULATED_TENANT_URL", "localhost:8090"],
    ])("fails naming %s when it is %j", (variable, value) => {
      expect(errorOf({ MATOOLKIT_TENANT: "simulated", [variable]: value })).toContain(`${variable}:`);
    });

    it("refuses in-process settings beside a URL, and entra credentials", () => {
      const message = errorOf({
        MATOOLKIT_TENANT: "simulated",
        MATOOLKIT_SIMULATED_TENANT_URL: "http://127.0.0.1:8090",
        MATOOLKIT_SIMULATED_THROTTLE_RATE: "0.1",
        MATOOLKIT_CLIENT_SECRET: "s3cr3t~value",
      });
      expect(message).toContain("MATOOLKIT_SIMULATED_THROTTLE_RATE: configures an in-process simulator");
      expect(message).toContain("MATOOLKIT_CLIENT_SECRET: is for MATOOLKIT_TENANT=entra");
      expect(message).not.toContain("s3cr3t");
    });
  });

  describe("MATOOLKIT_AZURE_CLOUD", () => {
    const secretAuth = {
      ...entra,
      MATOOLKIT_TENANT_AUTH: "client-secret",
      MATOOLKIT_CLIENT_SECRET: "s3cr3t",
    };

    it.each([
      ["AzureCloud", "AzureCloud"],
      ["AzureUSGovernment", "AzureUSGovernment"],
      ["azureusgovernmentdod", "AzureUSGovernmentDoD"],
      [" AzureChinaCloud ", "AzureChinaCloud"],
    ])(
      "entra: %j is the cloud %s, named in the start-up line unless it is the public one",
      (value, cloud) => {
        const config = tenantConfigFromEnv({ ...secretAuth, MATOOLKIT_AZURE_CLOUD: value });
        expect(config).toMatchObject({ mode: "entra", cloud });
        const suffix = cloud === "AzureCloud" ? "" : ` in ${cloud}`;
        expect(describeTenantConfig(config)).toBe(
          `tenant ${tenantGuid} (app ${clientGuid.toLowerCase()}, client-secret)${suffix}`,
        );
      },
    );

    it("a rehearsal against the simulated tenant may name a cloud too", () => {
      expect(
        tenantConfigFromEnv({ MATOOLKIT_TENANT: "simulated", MATOOLKIT_AZURE_CLOUD: "AzureUSGovernment" }),
      ).toMatchObject({ mode: "simulated", cloud: "AzureUSGovernment" });
    });

    it("a value that is no cloud stops the start, quoting it and naming the allowed ones", () => {
      expect(errorOf({ ...secretAuth, MATOOLKIT_AZURE_CLOUD: "AzureGermanCloud" })).toBe(
        'Invalid tenant configuration: MATOOLKIT_AZURE_CLOUD: "AzureGermanCloud" is not a cloud; ' +
          "use one of AzureCloud, AzureUSGovernment, AzureUSGovernmentDoD, AzureChinaCloud",
      );
      expect(errorOf({ MATOOLKIT_TENANT: "simulated", MATOOLKIT_AZURE_CLOUD: "GCCHigh" })).toContain(
        'MATOOLKIT_AZURE_CLOUD: "GCCHigh" is not a cloud',
      );
    });

    it("is refused without a tenant, like every tenant setting", () => {
      expect(errorOf({ MATOOLKIT_AZURE_CLOUD: "AzureUSGovernment" })).toContain(
        "MATOOLKIT_AZURE_CLOUD: is set but MATOOLKIT_TENANT is",
      );
    });

    it("managed-identity: a workload identity signing in at another cloud's authority is refused", () => {
      const workload = {
        ...entra,
        MATOOLKIT_TENANT_AUTH: "managed-identity",
        MATOOLKIT_AZURE_CREDENTIAL: "workload-identity",
        AZURE_CLIENT_ID: "11111111-2222-4333-8444-555566667777",
        AZURE_TENANT_ID: tenantGuid,
        AZURE_FEDERATED_TOKEN_FILE: "/var/run/secrets/azure/tokens/azure-identity-token",
      };
      expect(
        errorOf({
          ...workload,
          MATOOLKIT_AZURE_CLOUD: "AzureUSGovernment",
          AZURE_AUTHORITY_HOST: "https://login.microsoftonline.com/",
        }),
      ).toContain(
        "AZURE_AUTHORITY_HOST: is login.microsoftonline.com, but MATOOLKIT_AZURE_CLOUD=AzureUSGovernment signs in at login.microsoftonline.us",
      );
      expect(
        tenantConfigFromEnv({
          ...workload,
          MATOOLKIT_AZURE_CLOUD: "AzureUSGovernment",
          AZURE_AUTHORITY_HOST: "https://login.microsoftonline.us/",
        }),
      ).toMatchObject({ cloud: "AzureUSGovernment", auth: { kind: "managed-identity" } });
    });
  });

  it("SecretValue reveals only on request", () => {
    const secret = new SecretValue("hunter2");
    expect(secret.reveal()).toBe("hunter2");
    expect(JSON.stringify({ secret })).toBe('{"secret":"[redacted]"}');
    expect(inspect({ secret })).not.toContain("hunter2");
  });
});
