import type { TenantBehaviours } from "@matoolkit/simulated-tenant";

/**
 * For suites about one stale read at a time: replicas that lag by one fixed delay (every read in
 * the window shows the state before the write) and writes that resolve on the primary, instead of
 * the simulated tenant's default, the real service's flapping replicas and lagging write replica.
 * The default is exercised by the service-behaviour suites and the chaos rehearsal.
 */
export const settledReplicas: Partial<TenantBehaviours> = { replicaReads: "settled", writeLagMs: 0 };
