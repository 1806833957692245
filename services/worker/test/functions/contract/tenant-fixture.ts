import type { TenantClients } from "../../../src/tenant/tenant-clients.ts";
import type { WorkerFunctionContext } from "../../../src/functions/worker-function.ts";

/**
 * What a contract suite of the standard library needs from a tenant. The same suites run in
 * `npm test` against the simulated tenant and in `npm run test:tenant` against a real one, so a
 * suite creates every object it relies on through `tenant` (Graph / Exchange calls), names them
 * with `uniqueName`, and registers their removal with `cleanup`.
 */
export interface TenantFixture {
  readonly tenant: TenantClients;
  /** A verified domain of the tenant, for the UPNs and addresses the suite creates. */
  readonly domain: string;
  /** A name no other run uses (real tenants keep what a failed run left behind). */
  uniqueName(prefix: string): string;
  /** The context a function receives, as the worker builds it for a job. */
  context(overrides?: Partial<WorkerFunctionContext>): WorkerFunctionContext;
  /** Runs after the suite, last registered first; failures are reported, not thrown. */
  cleanup(action: () => Promise<void>): void;
  /** Waits until `probe` returns a value (replication delay), then returns it. */
  eventually<T>(probe: () => Promise<T | undefined>, what: string): Promise<T>;
}
