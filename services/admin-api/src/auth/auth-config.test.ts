import path from "node:path";
import { describe, expect, it } from "vitest";
import { authConfigFromEnv } from "./auth-config.ts";

const tenantId = "2f5c1a8e-3b7d-4c1e-9a0f-6d2b8e4c7a13";

describe("authConfigFromEnv", () => {
  it("defaults to local mode with the .matoolkit data dir in the current directory", () => {
    expect(authConfigFromEnv({})).toEqual({
      mode: "local",
      dataDir: path.resolve(".matoolkit"),
      issuer: "matoolkit-local",
      audience: "api://matoolkit",
    });
    expect(
      authConfigFromEnv({ MATOOLKIT_AUTH_MODE: "local", MATOOLKIT_DATA_DIR: "/var/lib/mt" }),
    ).toMatchObject({
      dataDir: "/var/lib/mt",
    });
  });

  it("builds the Entra config with the public cloud instance by default", () => {
    expect(
      authConfigFromEnv({
        MATOOLKIT_AUTH_MODE: "entra",
        AZURE_AD_TENANT_ID: tenantId,
        AZURE_AD_AUDIENCE: "api://matoolkit-admin",
      }),
    ).toEqual({
      mode: "entra",
      tenantId,
      audience: "api://matoolkit-admin",
      instance: "https://login.microsoftonline.com/",
    });
    const sovereign = authConfigFromEnv({
      MATOOLKIT_AUTH_MODE: "entra",
      AZURE_AD_TENANT_ID: tenantId,
      AZURE_AD_AUDIENCE: "api://x",
      AZURE_AD_INSTANCE: "https://login.microsoftonline.us",
    });
    expect(sovereign).toMatchObject({ instance: "https://login.microsoftonline.us/" });
  });

  it.each([
    [{ AZURE_AD_AUDIENCE: "api://x" }, /AZURE_AD_TENANT_ID is required when MATOOLKIT_AUTH_MODE=entra/],
    [{ AZURE_AD_TENANT_ID: tenantId, AZURE_AD_AUDIENCE: " " }, /AZURE_AD_AUDIENCE is required/],
    [
      { AZURE_AD_TENANT_ID: "contoso.onmicrosoft.com", AZURE_AD_AUDIENCE: "api://x" },
      /AZURE_AD_TENANT_ID.*GUID/,
    ],
    [
      { AZURE_AD_TENANT_ID: tenantId, AZURE_AD_AUDIENCE: "api://x", AZURE_AD_INSTANCE: "nope" },
      /AZURE_AD_INSTANCE/,
    ],
  ])("fails fast naming the variable to fix: %o", (env, message) => {
    expect(() => authConfigFromEnv({ MATOOLKIT_AUTH_MODE: "entra", ...env })).toThrow(message);
  });

  it("rejects an unknown mode, naming the allowed ones", () => {
    expect(() => authConfigFromEnv({ MATOOLKIT_AUTH_MODE: "azure" })).toThrow(
      'Invalid MATOOLKIT_AUTH_MODE "azure": allowed values are local, entra',
    );
  });
});
