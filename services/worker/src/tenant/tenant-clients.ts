import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import type { ExchangeClient } from "./exchange-client.ts";
import { azureCloud, defaultAzureCloud } from "./azure-clouds.ts";
import type { GraphClient } from "./graph-client.ts";

/**
 * The authenticated clients of the worker's target tenant, built once at start-up and shared by
 * every job (000: one authenticated session per runspace; here one client per tenant, reused).
 */
export interface TenantClients {
  readonly graph: GraphClient;
  readonly exchange: ExchangeClient;
}

/**
 * For a worker started without a tenant (diagnostics only): a tenant function fails at once,
 * permanently, saying what to configure, instead of the worker refusing to start.
 */
export function unconfiguredTenantClients(hint: string): TenantClients {
  const fail = (): never => {
    throw new NonRetriableError(reasonCodes.tenantNotConfigured, `This worker has no target tenant: ${hint}`);
  };
  return {
    graph: { serviceRoot: azureCloud(defaultAzureCloud).graphBaseUrl, request: async () => fail() },
    exchange: { invoke: async () => fail() },
  };
}
