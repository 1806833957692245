import {
  startSimulatedTenant,
  type SimulatedTenant,
  type SimulatedTenantOptions,
} from "@matoolkit/simulated-tenant";
import type { TokenCredential } from "@azure/identity";
import { createInvokeCommandExchangeClient } from "../../../src/tenant/invoke-command-exchange-client.ts";
import { createMsGraphClient } from "../../../src/tenant/msgraph-graph-client.ts";
import type { TenantClients } from "../../../src/tenant/tenant-clients.ts";
import type { TenantFixture } from "./tenant-fixture.ts";
import { createFixtureBase } from "./fixture-base.ts";

/** Any non-empty bearer token is accepted by the simulator. */
const simulatorCredential: TokenCredential = {
  getToken: async () => ({ token: "simulated-token", expiresOnTimestamp: Date.now() + 3_600_000 }),
};

export interface SimulatedFixture {
  readonly fixture: TenantFixture;
  /** The simulator itself: seed, faults, replication delay, change log. */
  readonly simulator: SimulatedTenant;
  close(): Promise<void>;
}

/** A simulated tenant and the real adapters pointed at it, as the worker would build them. */
export async function startSimulatedFixture(options: SimulatedTenantOptions = {}): Promise<SimulatedFixture> {
  const simulator = await startSimulatedTenant(options);
  const tenant: TenantClients = {
    graph: createMsGraphClient({ credential: simulatorCredential, baseUrl: simulator.url }),
    exchange: createInvokeCommandExchangeClient({
      credential: simulatorCredential,
      tenantId: simulator.tenantId,
      baseUrl: simulator.url,
    }),
  };
  const base = createFixtureBase({
    tenant,
    domain: simulator.state.domains[0]!,
    pollMs: 20,
    timeoutMs: 5_000,
  });
  return {
    fixture: base.fixture,
    simulator,
    close: async () => {
      await base.runCleanups();
      await simulator.close();
    },
  };
}
