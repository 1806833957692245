import type { TenantChecker } from "@matoolkit/domain";
import { runTenantCheck } from "./tenant-check.ts";
import type { TenantClients } from "./tenant-clients.ts";
import type { TenantConfig } from "./tenant-config.ts";

/**
 * The worker's pre-flight check, bound to its tenant clients: the app whose grants are read is
 * the configured client id (entra), or the simulated tenant's worker app. Without a tenant every
 * line says so (the clients fail with tenant.not_configured).
 */
export function tenantCheckerFor(
  config: TenantConfig,
  clients: TenantClients,
  description: string,
): TenantChecker {
  return async (request, signal) => {
    const appId =
      config.mode === "entra"
        ? config.clientId
        : config.mode === "simulated"
          ? // Loaded only in this mode, as createTenantClients loads the simulator.
            (await import("@matoolkit/simulated-tenant")).simulatedWorkerAppId
          : "00000000-0000-0000-0000-000000000000";
    return runTenantCheck({ description, appId, clients }, request, signal);
  };
}
