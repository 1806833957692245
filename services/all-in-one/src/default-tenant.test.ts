import { describe, expect, it } from "vitest";
import { chooseAllInOneTenant, type AllInOneTenantContext } from "./default-tenant.ts";
import { startAll } from "./start-all.ts";

const laptop: AllInOneTenantContext = {
  embeddedDatabase: true,
  production: false,
  exampleSeedPath: "/repo/examples/fabrikam-tenant.json",
};

describe("the tenant npm start runs against", () => {
  it("is the example's simulated tenant when nothing is configured, on the embedded database", () => {
    expect(chooseAllInOneTenant({}, laptop)).toEqual({
      env: {
        MATOOLKIT_TENANT: "simulated",
        MATOOLKIT_SIMULATED_TENANT_SEED: "/repo/examples/fabrikam-tenant.json",
        // Prepare and cutover minutes apart: the invited users accept at once.
        MATOOLKIT_SIMULATED_INVITEES_REDEEM: "at-once",
      },
      reason: "rehearsal",
    });
    // Blank counts as unset, as everywhere in the tenant settings.
    expect(chooseAllInOneTenant({ MATOOLKIT_TENANT: "  " }, laptop).reason).toBe("rehearsal");
  });

  it("is no tenant on a database server or in the production image, as before: never a rehearsal against real data by default", () => {
    expect(chooseAllInOneTenant({}, { ...laptop, embeddedDatabase: false })).toEqual({
      env: {},
      reason: "none",
    });
    expect(chooseAllInOneTenant({}, { ...laptop, production: true }).reason).toBe("none");
  });

  it("keeps MATOOLKIT_TENANT when set: none keeps today's behaviour (no tenant)", () => {
    for (const mode of ["none", "simulated", "entra"]) {
      expect(chooseAllInOneTenant({ MATOOLKIT_TENANT: mode }, laptop)).toEqual({
        env: { MATOOLKIT_TENANT: mode },
        reason: "configured",
      });
    }
  });

  it("refuses an unknown MATOOLKIT_TENANT, naming the variable, its value and the choices", () => {
    expect(() => chooseAllInOneTenant({ MATOOLKIT_TENANT: "simulator" }, laptop)).toThrow(
      'Invalid tenant configuration: MATOOLKIT_TENANT="simulator": must be one of none, simulated, entra',
    );
  });

  it("uses a real tenant whose settings are complete, without MATOOLKIT_TENANT", () => {
    const real = {
      MATOOLKIT_TENANT_ID: "contoso.onmicrosoft.com",
      MATOOLKIT_CLIENT_ID: "11111111-2222-4333-8444-555555555555",
      MATOOLKIT_TENANT_AUTH: "client-secret",
      MATOOLKIT_CLIENT_SECRET: "s3cret-value",
    };
    expect(chooseAllInOneTenant(real, laptop)).toEqual({
      env: { ...real, MATOOLKIT_TENANT: "entra" },
      reason: "real-tenant-settings",
    });
  });

  it("stops on a partly configured real tenant, naming every missing setting, never falling back to the simulator", () => {
    const partial = () =>
      chooseAllInOneTenant(
        { MATOOLKIT_TENANT_ID: "contoso.onmicrosoft.com", MATOOLKIT_TENANT_AUTH: "client-secret" },
        laptop,
      );
    expect(partial).toThrow(
      "Invalid tenant configuration: a real tenant is configured (MATOOLKIT_TENANT_ID, MATOOLKIT_TENANT_AUTH set), " +
        "so matoolkit starts against it and never falls back to the simulated tenant; " +
        "MATOOLKIT_CLIENT_ID: is required; MATOOLKIT_CLIENT_SECRET: is required",
    );
    // Without the auth kind, that is what is named.
    expect(() =>
      chooseAllInOneTenant({ MATOOLKIT_CLIENT_ID: "11111111-2222-4333-8444-555555555555" }, laptop),
    ).toThrow(
      /MATOOLKIT_TENANT_AUTH: is required one of certificate, key-vault-certificate, client-secret, managed-identity/u,
    );
  });

  it("never quotes a secret of a partly configured tenant in its error", () => {
    let message = "";
    try {
      chooseAllInOneTenant(
        { MATOOLKIT_TENANT_AUTH: "client-secret", MATOOLKIT_CLIENT_SECRET: "hunter2-very-secret" },
        laptop,
      );
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("MATOOLKIT_TENANT_ID: is required");
    expect(message).not.toContain("hunter2-very-secret");
  });

  it("reads a simulator's own settings as a simulated tenant, seeded with the example unless told otherwise", () => {
    expect(chooseAllInOneTenant({ MATOOLKIT_SIMULATED_TENANT_PORT: "8090" }, laptop)).toEqual({
      env: {
        MATOOLKIT_SIMULATED_TENANT_PORT: "8090",
        MATOOLKIT_TENANT: "simulated",
        MATOOLKIT_SIMULATED_TENANT_SEED: "/repo/examples/fabrikam-tenant.json",
      },
      reason: "simulated-settings",
    });
    expect(
      chooseAllInOneTenant(
        { MATOOLKIT_SIMULATED_TENANT_URL: "http://127.0.0.1:8090" },
        { ...laptop, production: true },
      ).env,
    ).toEqual({ MATOOLKIT_SIMULATED_TENANT_URL: "http://127.0.0.1:8090", MATOOLKIT_TENANT: "simulated" });
  });

  it("counts every simulator setting the worker reads as one, so a chosen one is kept, never the rehearsal's", () => {
    // The rehearsal's invitees accept at once; told `manual`, they wait for the redeem as the service does.
    expect(chooseAllInOneTenant({ MATOOLKIT_SIMULATED_INVITEES_REDEEM: "manual" }, laptop)).toEqual({
      env: {
        MATOOLKIT_SIMULATED_INVITEES_REDEEM: "manual",
        MATOOLKIT_TENANT: "simulated",
        MATOOLKIT_SIMULATED_TENANT_SEED: "/repo/examples/fabrikam-tenant.json",
      },
      reason: "simulated-settings",
    });
    expect(chooseAllInOneTenant({ MATOOLKIT_SIMULATED_PROFILE: "chaos" }, laptop).reason).toBe(
      "simulated-settings",
    );
  });
});

describe("startAll with a tenant it cannot use", () => {
  it("stops before starting anything, naming the setting at fault", async () => {
    // No database, no port: the configuration is refused before either would be opened.
    await expect(startAll({ MATOOLKIT_TENANT: "real" })).rejects.toThrow(
      /^Invalid tenant configuration: MATOOLKIT_TENANT="real": must be one of none, simulated, entra/u,
    );
    await expect(startAll({ MATOOLKIT_CLIENT_ID: "11111111-2222-4333-8444-555555555555" })).rejects.toThrow(
      /never falls back to the simulated tenant; .*MATOOLKIT_TENANT_AUTH: is required/u,
    );
  });
});
