import type { StandInBroker } from "./broker.ts";
import type { Subscription } from "./subscriptions.ts";

/** What the HTTP API handlers need to know about the sidecar they serve. */
export interface SidecarContext {
  readonly appId: string;
  readonly sidecarId: string;
  readonly appUrl: string | undefined;
  readonly pubsubNames: readonly string[];
  readonly stateStores: readonly string[];
  readonly apiToken: string | undefined;
  readonly honourScheduledEnqueueTime: boolean;
  readonly broker: StandInBroker;
  isOutboundReady(): boolean;
  isAppChannelReady(): boolean;
  subscriptions(): readonly Subscription[];
  readonly log: SidecarLogger;
}

export type SidecarLogLevel = "debug" | "info" | "warn" | "error";

/** Receives the sidecar's log lines; they never contain tokens or message bodies. */
export type SidecarLogger = (level: SidecarLogLevel, message: string) => void;
