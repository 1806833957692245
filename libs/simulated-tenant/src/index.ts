/**
 * A simulated Microsoft 365 tenant for rehearsals and tests: Microsoft Graph and Exchange Online
 * admin API (InvokeCommand) over HTTP, stateful, with the real error shapes, throttling and
 * replication delay. See README.md.
 */
export * from "./simulated-tenant.ts";
export * from "./model.ts";
export * from "./seed.ts";
export * from "./faults.ts";
export * from "./behaviours.ts";
export { concurrencyRefusalText, ExchangeConcurrencyThrottle } from "./exchange/concurrency-throttle.ts";
export * from "./prerequisite-rules.ts";
export { redeemInvitations } from "./graph/invitation-redemption.ts";
export * from "./error-bodies.ts";
export { TenantState } from "./tenant-state.ts";
export { ReplicatedCollection } from "./replicated-collection.ts";
export type { SimulatorContext } from "./simulator-context.ts";
export * from "./tenant-app.ts";
