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

  const clientId = "6e9b2f4a-1c3d-4e5f-8a7b-9c0d1e2f3a4b";
  const entra = (env: Record<string, string>) => authConfigFromEnv({ MATOOLKIT_AUTH_MODE: "entra", ...env });

  it("builds the Entra config from the tenant and client id, with public cloud defaults", () => {
    expect(entra({ AZURE_AD_TENANT_ID: tenantId, AZURE_AD_CLIENT_ID: clientId })).toEqual({
      mode: "entra",
      tenantId,
      clientId,
      audience: `api://${clientId}`,
      instance: "https://login.microsoftonline.com/",
      v1Issuer: `https://sts.windows.net/${tenantId}/`,
      scopes: [],
    });
  });

  it("keeps a custom Application ID URI next to the client id, and reads the accepted scopes", () => {
    expect(
      entra({
        AZURE_AD_TENANT_ID: tenantId,
        AZURE_AD_CLIENT_ID: clientId,
        AZURE_AD_AUDIENCE: "api://matoolkit-admin",
        AZURE_AD_SCOPES: " access_as_user, Runbooks.Read  Batches.Manage ",
      }),
    ).toMatchObject({
      clientId,
      audience: "api://matoolkit-admin",
      scopes: ["access_as_user", "Runbooks.Read", "Batches.Manage"],
    });
  });

  it("derives the client id from an api://{client-id} audience when AZURE_AD_CLIENT_ID is unset", () => {
    expect(entra({ AZURE_AD_TENANT_ID: tenantId, AZURE_AD_AUDIENCE: `api://${clientId}/` })).toMatchObject({
      clientId,
      audience: `api://${clientId}/`,
    });
  });

  it.each([
    ["https://login.microsoftonline.us", "https://login.microsoftonline.us/", "https://sts.windows.net/"],
    ["https://login.chinacloudapi.cn/", "https://login.chinacloudapi.cn/", "https://sts.chinacloudapi.cn/"],
  ])("derives the v1 issuer of the national cloud %s", (instance, normalized, v1Host) => {
    expect(
      entra({ AZURE_AD_TENANT_ID: tenantId, AZURE_AD_CLIENT_ID: clientId, AZURE_AD_INSTANCE: instance }),
    ).toMatchObject({ instance: normalized, v1Issuer: `${v1Host}${tenantId}/` });
  });

  it("takes the v1 issuer from AZURE_AD_V1_ISSUER when set", () => {
    const v1Issuer = `https://sts.example.test/${tenantId}/`;
    expect(
      entra({
        AZURE_AD_TENANT_ID: tenantId,
        AZURE_AD_CLIENT_ID: clientId,
        AZURE_AD_INSTANCE: "https://login.example.test/",
        AZURE_AD_V1_ISSUER: v1Issuer,
      }),
    ).toMatchObject({ instance: "https://login.example.test/", v1Issuer });
  });

  const base = { AZURE_AD_TENANT_ID: tenantId, AZURE_AD_CLIENT_ID: clientId };
  it.each([
    [{ AZURE_AD_CLIENT_ID: clientId }, /AZURE_AD_TENANT_ID is required when MATOOLKIT_AUTH_MODE=entra/],
    [{ ...base, AZURE_AD_TENANT_ID: "contoso.onmicrosoft.com" }, /AZURE_AD_TENANT_ID.*GUID/],
    [{ AZURE_AD_TENANT_ID: tenantId }, /AZURE_AD_CLIENT_ID is required when MATOOLKIT_AUTH_MODE=entra/],
    [
      { AZURE_AD_TENANT_ID: tenantId, AZURE_AD_AUDIENCE: "api://matoolkit-admin" },
      /AZURE_AD_CLIENT_ID is required when MATOOLKIT_AUTH_MODE=entra/,
    ],
    [{ ...base, AZURE_AD_CLIENT_ID: "matoolkit-admin" }, /Invalid AZURE_AD_CLIENT_ID: .*GUID/],
    [{ ...base, AZURE_AD_AUDIENCE: `api://${tenantId}` }, /AZURE_AD_AUDIENCE .*AZURE_AD_CLIENT_ID/],
    [{ ...base, AZURE_AD_INSTANCE: "nope" }, /AZURE_AD_INSTANCE/],
    [{ ...base, AZURE_AD_INSTANCE: "https://login.example.test/" }, /AZURE_AD_V1_ISSUER is required/],
    [{ ...base, AZURE_AD_V1_ISSUER: "https://sts.windows.net/" }, /Invalid AZURE_AD_V1_ISSUER/],
    [{ ...base, AZURE_AD_SCOPES: `api://${clientId}/access_as_user` }, /Invalid AZURE_AD_SCOPES/],
    [{ ...base, AZURE_AD_SCOPES: ".default" }, /Invalid AZURE_AD_SCOPES/],
  ])("fails fast naming the variable to fix: %o", (env, message) => {
    expect(() => entra(env)).toThrow(message);
  });

  it("rejects an unknown mode, naming the allowed ones", () => {
    expect(() => authConfigFromEnv({ MATOOLKIT_AUTH_MODE: "azure" })).toThrow(
      'Invalid MATOOLKIT_AUTH_MODE "azure": allowed values are local, entra',
    );
  });
});
