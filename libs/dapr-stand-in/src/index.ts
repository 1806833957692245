/**
 * A stand-in for the Dapr sidecar's HTTP API, for tests of code written against Dapr (daprd cannot
 * run here). It speaks only the documented Dapr HTTP API and depends on nothing else in the repo.
 * See README.md for exactly which endpoints and semantics are emulated.
 */
export { createStandInBroker } from "./broker.ts";
export type { StandInBroker, StandInBrokerOptions, ResolvedBrokerOptions } from "./broker.ts";
export { startStandInSidecar } from "./sidecar.ts";
export type { StandInSidecar, StandInSidecarOptions, SubscriptionView } from "./sidecar.ts";
export type { SidecarLogger, SidecarLogLevel } from "./sidecar-context.ts";
export type { CloudEvent } from "./cloud-event.ts";
export type { BrokerMessage, UndeliveredMessage } from "./pubsub.ts";
export type { DeliveryRecord, DeliveryOutcome } from "./app-delivery.ts";
export type { JobView, JobTriggerRecord, JobFailurePolicy } from "./jobs.ts";
export type { StateStoreKind, StoredItem } from "./state-store.ts";
export { compileCel, CelSyntaxError } from "./cel-subset.ts";
export type { CompiledCel } from "./cel-subset.ts";
