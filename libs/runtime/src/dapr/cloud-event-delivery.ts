import { routingProperties, topics, type Topic } from "@matoolkit/domain";
import type { Context } from "@opentelemetry/api";
import { z } from "zod";
import { telemetryProperties, traceContextOf, withPublishedAt } from "../telemetry/trace-properties.ts";

/**
 * What Dapr POSTs to a topic route: a CloudEvent 1.0 whose `data` is our message body, `id` the
 * message id (published as `cloudevent.id`) and `type` its MessageType (`cloudevent.type`).
 * Only the fields we rely on are checked; anything else passes through.
 */
export const daprCloudEventSchema = z.looseObject({
  id: z.string().min(1),
  type: z.string().optional(),
  topic: z.string().optional(),
  data: z.unknown().optional(),
});
export type DaprCloudEvent = z.infer<typeof daprCloudEventSchema>;

/**
 * The context a delivery's handler runs in: the CloudEvent's W3C trace context as the remote
 * parent, and its `time` (set by daprd at publish) as the publish time for the queue lag. Dapr
 * delivers the CloudEvent, not the broker's application properties, so these cannot come as
 * properties of the Delivery (instrumented-bus.ts reads them from the active context).
 */
export function deliveryContextOf(event: DaprCloudEvent): Context {
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  const traceparent = text(event.traceparent);
  const tracestate = text(event.tracestate);
  const time = text(event.time) === undefined ? undefined : new Date(event.time as string);
  return withPublishedAt(
    traceContextOf({
      ...(traceparent === undefined ? {} : { [telemetryProperties.traceparent]: traceparent }),
      ...(tracestate === undefined ? {} : { [telemetryProperties.tracestate]: tracestate }),
    }),
    time === undefined || Number.isNaN(time.getTime()) ? undefined : time,
  );
}

/** Dapr's own type when the publisher set none. */
export const DAPR_DEFAULT_EVENT_TYPE = "com.dapr.event.sent";

export function isTopic(value: string): value is Topic {
  return (Object.values(topics) as string[]).includes(value);
}

/**
 * Dapr delivers the CloudEvent, not the broker's application properties, so the routing
 * properties are rebuilt from what the event carries: MessageType from its type, the others
 * (WorkerId) from the body field of the same name, which every 000 message that is filtered on
 * it carries. Filters and routing rules therefore work on the same values on every broker.
 */
export function propertiesOf(event: DaprCloudEvent): Record<string, string> {
  const properties: Record<string, string> = {};
  if (event.type !== undefined && event.type !== DAPR_DEFAULT_EVENT_TYPE) {
    properties[routingProperties.messageType] = event.type;
  }
  const data = event.data;
  if (typeof data === "object" && data !== null) {
    for (const name of Object.values(routingProperties)) {
      if (name === routingProperties.messageType) continue;
      const value = (data as Record<string, unknown>)[name];
      if (typeof value === "string") properties[name] = value;
    }
  }
  return properties;
}

/** Publish metadata: CloudEvent overrides, plus the properties as broker application properties. */
export function publishMetadata(message: {
  readonly id: string;
  readonly properties: Readonly<Record<string, string>>;
}): Record<string, string> {
  const type = message.properties[routingProperties.messageType];
  const traceparent = message.properties[telemetryProperties.traceparent];
  const tracestate = message.properties[telemetryProperties.tracestate];
  return {
    "cloudevent.id": message.id,
    ...(type === undefined ? {} : { "cloudevent.type": type }),
    // The message's trace context becomes the CloudEvent's (daprd's override keys), so the
    // consumer's span continues the publisher's trace whatever Dapr's own tracing does.
    ...(traceparent === undefined ? {} : { "cloudevent.traceparent": traceparent }),
    ...(tracestate === undefined ? {} : { "cloudevent.tracestate": tracestate }),
    // Service Bus: the id for its duplicate detection, the properties for SQL filters.
    MessageId: message.id,
    ...message.properties,
  };
}

/**
 * One entry of Dapr's bulk publish request (`POST /v1.0-alpha1/publish/bulk/{pubsub}/{topic}`):
 * the entry id is the message id (unique within a request after publishMany's dedupe), the
 * metadata the same as a single publish's, so the CloudEvent gets our id and type.
 */
export function bulkPublishEntry(message: {
  readonly id: string;
  readonly body: unknown;
  readonly properties: Readonly<Record<string, string>>;
}): { entryId: string; event: unknown; contentType: string; metadata: Record<string, string> } {
  return {
    entryId: message.id,
    event: message.body ?? null,
    contentType: "application/json",
    metadata: publishMetadata(message),
  };
}

/** The body of a bulk publish that answered 500: the entries that did not go out. */
export const bulkPublishFailureSchema = z.looseObject({
  failedEntries: z.array(z.looseObject({ entryId: z.string(), error: z.string().optional() })).default([]),
  errorCode: z.string().optional(),
});
