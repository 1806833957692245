import type { ExchangeConcurrencyThrottle } from "./exchange/concurrency-throttle.ts";
import type { FaultInjector } from "./faults.ts";
import type { TenantApp } from "./tenant-app.ts";
import type { TenantState } from "./tenant-state.ts";

/** What every route module of the simulated tenant receives. */
export interface SimulatorContext {
  readonly state: TenantState;
  readonly faults: FaultInjector;
  readonly exchangeConcurrency: ExchangeConcurrencyThrottle;
  /** The worker app's grants and the tenant settings the pre-flight check reads. */
  readonly app: TenantApp;
}
