import type { TokenCredential } from "@azure/identity";
import type { Logger } from "@matoolkit/runtime";
import { createTenantCredential, staticTokenCredential, type CredentialDeps } from "./credentials.ts";
import { createInvokeCommandExchangeClient } from "./invoke-command-exchange-client.ts";
import { createMsGraphClient } from "./msgraph-graph-client.ts";
import type { AzureCloudName } from "./azure-clouds.ts";
import {
  cloudSuffix,
  tenantEnvVariables as v,
  type SimulatedTenantConfig,
  type TenantConfig,
} from "./tenant-config.ts";
import { simulatedTenantChangeLog, type TenantChangeLog } from "./simulated-tenant-changes.ts";
import { unconfiguredTenantClients, type TenantClients } from "./tenant-clients.ts";

export interface BuiltTenantClients {
  readonly clients: TenantClients;
  /** Which tenant and how, e.g. `simulated tenant at http://127.0.0.1:PORT`: safe to log. */
  readonly description: string;
  /** A simulated tenant's record of what it wrote (`matoolkit tenant changes`); a real tenant has none. */
  readonly changeLog?: TenantChangeLog;
  /** Stops what was started for the tenant (an in-process simulator); idempotent. */
  close(): Promise<void>;
}

export interface CreateTenantClientsOptions {
  readonly logger: Logger;
  /** Key Vault reader and options (tests). */
  readonly credentialDeps?: CredentialDeps;
  readonly fetch?: typeof fetch;
}

/** The simulator accepts any non-empty bearer token. */
const simulatorToken = "matoolkit-simulated-tenant";

/**
 * The worker's one pair of tenant clients, built at start-up and shared by every job (one
 * credential, hence one token cache, per tenant):
 * - `none`: clients whose every call fails with `tenant.not_configured`, saying what to set;
 * - `simulated`: the real adapters pointed at a simulated tenant, started here or already running;
 * - `entra`: the real adapters with the target tenant's credential.
 * Credential mistakes (unreadable certificate, wrong password, Key Vault refusal) throw here.
 */
export async function createTenantClients(
  config: TenantConfig,
  options: CreateTenantClientsOptions,
): Promise<BuiltTenantClients> {
  switch (config.mode) {
    case "none":
      return {
        clients: unconfiguredTenantClients(
          `set ${v.mode} to "entra" (a real tenant) or "simulated" (see README, Worker and tenant)`,
        ),
        description: "no target tenant (tenant functions fail with tenant.not_configured)",
        close: async () => {},
      };
    case "simulated":
      return simulatedTenantClients(config, options);
    case "entra": {
      const credential = await createTenantCredential(config, options.credentialDeps);
      options.logger.debug({ tenantId: config.tenantId, auth: config.auth.kind }, "tenant credential ready");
      return {
        clients: adapters(credential, config.tenantId, config.cloud, config, options),
        description: `tenant ${config.tenantId} (${config.auth.kind}, app ${config.clientId})${cloudSuffix(config.cloud)}`,
        close: async () => {},
      };
    }
    default: {
      const unreachable: never = config;
      throw new Error(`Unknown tenant mode ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * The real adapters for one tenant. The cloud sets the token scopes and the default endpoints;
 * an explicit base URL (MATOOLKIT_GRAPH_BASE_URL / MATOOLKIT_EXCHANGE_BASE_URL, or the simulated
 * tenant's URL) wins over the cloud's endpoint but never changes the scopes.
 */
function adapters(
  credential: TokenCredential,
  tenantId: string,
  cloud: AzureCloudName,
  endpoints: { readonly graphBaseUrl?: string; readonly exchangeBaseUrl?: string },
  options: CreateTenantClientsOptions,
): TenantClients {
  const { graphBaseUrl, exchangeBaseUrl } = endpoints;
  return {
    graph: createMsGraphClient({
      credential,
      cloud,
      ...(graphBaseUrl === undefined ? {} : { baseUrl: graphBaseUrl }),
    }),
    exchange: createInvokeCommandExchangeClient({
      credential,
      tenantId,
      cloud,
      ...(exchangeBaseUrl === undefined ? {} : { baseUrl: exchangeBaseUrl }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    }),
  };
}

async function simulatedTenantClients(
  config: SimulatedTenantConfig,
  options: CreateTenantClientsOptions,
): Promise<BuiltTenantClients> {
  const credential = staticTokenCredential(simulatorToken);
  if (config.url !== undefined) {
    const tenantId = await runningSimulatorTenantId(config.url, options.fetch ?? fetch);
    return {
      clients: adapters(
        credential,
        tenantId,
        config.cloud,
        { graphBaseUrl: config.url, exchangeBaseUrl: config.url },
        options,
      ),
      description: `simulated tenant ${tenantId} at ${config.url}${cloudSuffix(config.cloud)}`,
      changeLog: simulatedTenantChangeLog(config.url, options.fetch ?? fetch),
      close: async () => {},
    };
  }

  // Loaded only in this mode: a production worker never needs the simulator's code.
  const { loadTenantSeed, startSimulatedTenant } = await import("@matoolkit/simulated-tenant");
  let seed: Awaited<ReturnType<typeof loadTenantSeed>> | undefined;
  if (config.seedPath !== undefined) {
    try {
      seed = await loadTenantSeed(config.seedPath);
    } catch (error) {
      throw new Error(`${v.simulatedSeed}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  let simulator: Awaited<ReturnType<typeof startSimulatedTenant>>;
  try {
    simulator = await startSimulatedTenant({
      port: config.port,
      ...(seed === undefined ? {} : { seed }),
      ...(config.replicationDelayMs === undefined ? {} : { replicationDelayMs: config.replicationDelayMs }),
      ...(config.profile === undefined ? {} : { profile: config.profile }),
      ...(config.randomSeed === undefined ? {} : { randomSeed: config.randomSeed }),
      ...(config.inviteesRedeem === undefined
        ? {}
        : { behaviours: { inviteesRedeem: config.inviteesRedeem } }),
      throttle: { rate: config.throttleRate, retryAfterSeconds: 1 },
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      `${v.simulatedPort}: the simulated tenant could not listen on port ${config.port}${code ? ` (${code})` : ""}`,
    );
  }
  const settings = [
    config.seedPath === undefined ? "empty" : `seed ${config.seedPath}`,
    ...(config.profile === undefined || config.profile === "default" ? [] : [`profile ${config.profile}`]),
    ...(config.randomSeed === undefined ? [] : [`random seed ${config.randomSeed}`]),
    ...(config.throttleRate > 0 ? [`throttle rate ${config.throttleRate}`] : []),
    ...(config.inviteesRedeem === "at-once" ? ["invitees accept at once"] : []),
    ...(simulator.state.replicationDelayMs > 0
      ? [`replication delay ${simulator.state.replicationDelayMs} ms`]
      : []),
  ];
  let closed: Promise<void> | undefined;
  return {
    clients: adapters(
      credential,
      simulator.tenantId,
      config.cloud,
      { graphBaseUrl: simulator.url, exchangeBaseUrl: simulator.url },
      options,
    ),
    description: `simulated tenant ${simulator.tenantId} at ${simulator.url} (in-process, ${settings.join(", ")})${cloudSuffix(config.cloud)}`,
    changeLog: simulatedTenantChangeLog(simulator.url, options.fetch ?? fetch),
    close: () => (closed ??= simulator.close()),
  };
}

/** The simulator's admin endpoint tells its tenant id; it also proves the URL answers. */
async function runningSimulatorTenantId(url: string, doFetch: typeof fetch): Promise<string> {
  let body: unknown;
  try {
    const response = await doFetch(`${url}/_simulator/state`, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    body = await response.json();
  } catch (error) {
    const why = error instanceof Error ? error.message : "no answer";
    throw new Error(
      `${v.simulatedUrl}: no simulated tenant answers at ${url} (${why}); start one with npm run simulator`,
    );
  }
  const tenantId = (body as { tenantId?: unknown } | null)?.tenantId;
  if (typeof tenantId !== "string" || tenantId === "") {
    throw new Error(
      `${v.simulatedUrl}: ${url} does not look like a simulated tenant (no tenantId in /_simulator/state)`,
    );
  }
  return tenantId;
}
