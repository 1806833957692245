import type { FaultInjector } from "./faults.ts";
import type { TenantState } from "./tenant-state.ts";

/** What every route module of the simulated tenant receives. */
export interface SimulatorContext {
  readonly state: TenantState;
  readonly faults: FaultInjector;
}
