import type { DaprHttp } from "./dapr-http.ts";

/**
 * Pub/sub components that deliver a message at the time its `ScheduledEnqueueTimeUtc` metadata
 * names: only Azure Service Bus (components-contrib pubsub.azure.servicebus.topics/queues, the
 * `ScheduledEnqueueTimeUtc` publish metadata). Every other broker publishes at once, which would
 * fire every retry check and poll check immediately.
 */
const DELAYING_PUBSUB_TYPES = /^pubsub\.azure\.servicebus(\.topics|\.queues)?$/u;

export class PubsubCannotDelayError extends Error {
  constructor(pubsubName: string, type: string | undefined) {
    super(
      `MATOOLKIT_TIMERS=dapr-delayed-messages (the aca preset) needs a pub/sub that delays messages ` +
        `(Azure Service Bus: pubsub.azure.servicebus.topics or .queues), but ${pubsubName} is ` +
        `${type === undefined ? "not loaded by the sidecar" : type}, which delivers at once. ` +
        `Use MATOOLKIT_TIMERS=dapr-jobs (the Dapr Jobs API) or embedded with this broker.`,
    );
    this.name = "PubsubCannotDelayError";
  }
}

/** Asks the sidecar which type `pubsubName` is (GET /v1.0/metadata) and refuses one that cannot delay. */
export async function assertPubsubCanDelay(http: DaprHttp, pubsubName: string): Promise<void> {
  const response = await http.request({ method: "GET", path: "/v1.0/metadata", operation: "metadata.get" });
  const metadata = (await response.json()) as { components?: Array<{ name?: unknown; type?: unknown }> };
  const component = (metadata.components ?? []).find((candidate) => candidate.name === pubsubName);
  const type = typeof component?.type === "string" ? component.type : undefined;
  if (type === undefined || !DELAYING_PUBSUB_TYPES.test(type))
    throw new PubsubCannotDelayError(pubsubName, type);
}
