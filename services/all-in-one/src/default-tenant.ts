import {
  entraVariables as realTenantVariables,
  simulatedVariables as simulatedTenantVariables,
  tenantConfigFromEnv,
  tenantEnvVariables as v,
  tenantModes,
} from "@matoolkit/worker";

type Env = Readonly<Record<string, string | undefined>>;

export interface AllInOneTenantChoice {
  /** The environment the worker reads: MATOOLKIT_TENANT (and the seed) filled in when defaulted. */
  readonly env: Record<string, string | undefined>;
  /**
   * How the tenant was chosen: `configured` (MATOOLKIT_TENANT set), `real-tenant-settings` (unset,
   * but a real tenant's variables are: entra), `simulated-settings` (unset, a simulator's
   * variables are), `rehearsal` (nothing set, embedded: the example's simulated tenant) or `none`
   * (nothing set, on a database server or in the production image: no tenant, as before).
   */
  readonly reason: "configured" | "real-tenant-settings" | "simulated-settings" | "rehearsal" | "none";
}

export interface AllInOneTenantContext {
  /** The database is the embedded one this process starts (no DATABASE_URL): a laptop, not production. */
  readonly embeddedDatabase: boolean;
  /** NODE_ENV=production, as the image sets it: never a simulator by default there. */
  readonly production: boolean;
  /** The seed of the rehearsal: examples/fabrikam-tenant.json, the tenant examples/contoso-to-fabrikam.yaml expects. */
  readonly exampleSeedPath: string;
}

const isSet = (env: Env, name: string): boolean => (env[name]?.trim() ?? "") !== "";

/**
 * The worker's tenant for `npm start` when MATOOLKIT_TENANT is not set. A fresh clone rehearses:
 * the simulated tenant seeded from the example, so the Quickstart's runbook runs end to end and
 * nothing real is touched. Only there: on a database server (DATABASE_URL) or in the production
 * image (NODE_ENV=production), an unset MATOOLKIT_TENANT still means no tenant, as for the
 * separate worker service, so a deployment never rehearses against its real data by default.
 * A real tenant's settings always win, and are never half-used: when any is set, the tenant is
 * `entra` and every missing one is a start-up error, never a fall-back to the simulator.
 */
export function chooseAllInOneTenant(env: Env, context: AllInOneTenantContext): AllInOneTenantChoice {
  const mode = env[v.mode]?.trim() ?? "";
  if (mode !== "") {
    if (!(tenantModes as readonly string[]).includes(mode)) {
      throw new Error(
        `Invalid tenant configuration: ${v.mode}=${JSON.stringify(mode)}: must be one of ${tenantModes.join(", ")} ` +
          `(none: no tenant; simulated: the simulated tenant; entra: a real tenant), or unset`,
      );
    }
    return { env: { ...env }, reason: "configured" };
  }
  const realSettings = realTenantVariables.filter((name) => isSet(env, name));
  if (realSettings.length > 0) {
    const chosen = { ...env, [v.mode]: "entra" };
    try {
      tenantConfigFromEnv(chosen);
    } catch (error) {
      const why = error instanceof Error ? error.message.replace(/^Invalid tenant configuration: /u, "") : "";
      throw new Error(
        `Invalid tenant configuration: a real tenant is configured (${realSettings.join(", ")} set), ` +
          `so matoolkit starts against it and never falls back to the simulated tenant; ${why}`,
        { cause: error },
      );
    }
    return { env: chosen, reason: "real-tenant-settings" };
  }
  if (simulatedTenantVariables.some((name) => isSet(env, name))) {
    const seeded = isSet(env, v.simulatedUrl) || isSet(env, v.simulatedSeed);
    return {
      env: {
        ...env,
        [v.mode]: "simulated",
        ...(seeded ? {} : { [v.simulatedSeed]: context.exampleSeedPath }),
      },
      reason: "simulated-settings",
    };
  }
  if (!context.embeddedDatabase || context.production) return { env: { ...env }, reason: "none" };
  return {
    // The example's invitees accept at once: the Quickstart runs prepare and cutover minutes apart,
    // where a real wave leaves the invited users days to redeem.
    env: {
      ...env,
      [v.mode]: "simulated",
      [v.simulatedSeed]: context.exampleSeedPath,
      [v.simulatedInviteesRedeem]: "at-once",
    },
    reason: "rehearsal",
  };
}
