import type { IncomingMessage, ServerResponse } from "node:http";
import { buildCloudEvent, CloudEventError, type CloudEvent } from "./cloud-event.ts";
import { headerValue, metadataFromQuery, readBody, sendDaprError, sendEmpty } from "./http-util.ts";
import type { SidecarContext } from "./sidecar-context.ts";

/**
 * `POST|PUT /v1.0/publish/<pubsubname>/<topic>[?metadata.<key>=<value>]` (pub/sub API reference).
 * The metadata travels with the message to the broker; `ScheduledEnqueueTimeUtc` holds the message
 * back like Azure Service Bus does when the sidecar emulates that component, and `ttlInSeconds`
 * expires it.
 */

const SCHEDULED_ENQUEUE_TIME_KEY = "ScheduledEnqueueTimeUtc";
// Go's http.TimeFormat ("Mon, 02 Jan 2006 15:04:05 GMT") and RFC 3339 are what the Service Bus
// component parses (RFC 3339 only in newer components-contrib releases; older ones ignore it).
const HTTP_DATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export async function handlePublish(
  context: SidecarContext,
  request: IncomingMessage,
  response: ServerResponse,
  pubsubName: string,
  topic: string,
  query: URLSearchParams,
): Promise<void> {
  const metadata = metadataFromQuery(query);
  if (!checkPublishTarget(context, response, pubsubName, topic, metadata)) return;

  const now = new Date();
  const visibleAt = visibleAtFor(context, metadata, now);
  if (visibleAt === undefined) {
    sendInvalidScheduledTime(response, pubsubName, topic);
    return;
  }

  let cloudEvent: CloudEvent;
  try {
    cloudEvent = buildCloudEvent({
      sourceAppId: context.appId,
      pubsubName,
      topic,
      contentType: headerValue(request, "content-type"),
      body: await readBody(request),
      metadata,
      traceparent: headerValue(request, "traceparent"),
      tracestate: headerValue(request, "tracestate"),
      now,
    });
  } catch (error) {
    if (!(error instanceof CloudEventError)) throw error;
    sendCloudEventCreationError(response, error);
    return;
  }

  // The pub/sub component refusing the message (a fault a test injected).
  const refusal = context.broker.internals.takePublishFailure(cloudEvent.id);
  if (refusal !== undefined) {
    sendDaprError(
      response,
      500,
      "ERR_PUBSUB_PUBLISH_MESSAGE",
      `error when publish to topic ${topic} in pubsub ${pubsubName}: ${refusal}`,
      "DAPR_PUBSUB_PUBLISH_MESSAGE",
    );
    return;
  }
  handToBroker(context, { pubsubName, topic, cloudEvent, metadata, now, visibleAt });
  context.log("debug", `published CloudEvent ${cloudEvent.id} to ${pubsubName}/${topic}`);
  sendEmpty(response);
}

/** One accepted message, single or bulk, into the broker as this sidecar's app publishes it. */
export function handToBroker(
  context: SidecarContext,
  message: {
    pubsubName: string;
    topic: string;
    cloudEvent: CloudEvent;
    metadata: Record<string, string>;
    now: Date;
    visibleAt: Date;
  },
): void {
  const { now, ...rest } = message;
  context.broker.internals.pubsub.publish({
    ...rest,
    publishedAt: now,
    publishedBy: context.appId,
    deadLetterOf: undefined,
  });
}

/** daprd's answer when the CloudEvent envelope cannot be built (single and bulk alike). */
export function sendCloudEventCreationError(response: ServerResponse, error: CloudEventError): void {
  sendDaprError(
    response,
    500,
    "ERR_PUBSUB_CLOUD_EVENTS_SER",
    `cannot create cloudevent: ${error.message}`,
    "DAPR_PUBSUB_CLOUD_EVENT_CREATION",
  );
}

/**
 * What daprd checks before publishing, single or bulk: the pub/sub exists, the topic is named,
 * and (stand-in) no `rawPayload`. Answers the error and returns false otherwise.
 */
export function checkPublishTarget(
  context: SidecarContext,
  response: ServerResponse,
  pubsubName: string,
  topic: string,
  metadata: Record<string, string>,
): boolean {
  if (pubsubName === "") {
    sendDaprError(response, 404, "ERR_PUBSUB_EMPTY", "pubsub name is empty", "DAPR_PUBSUB_NAME_EMPTY");
    return false;
  }
  if (!context.pubsubNames.includes(pubsubName)) {
    sendDaprError(
      response,
      404,
      "ERR_PUBSUB_NOT_FOUND",
      `pubsub ${pubsubName} is not found`,
      "DAPR_PUBSUB_NOT_FOUND",
      metadata,
    );
    return false;
  }
  if (topic === "") {
    sendDaprError(
      response,
      404,
      "ERR_TOPIC_EMPTY",
      `topic is empty in pubsub ${pubsubName}`,
      "DAPR_PUBSUB_TOPIC_NAME_EMPTY",
    );
    return false;
  }
  if (metadata.rawPayload?.toLowerCase() === "true") {
    sendDaprError(
      response,
      400,
      "ERR_STAND_IN_NOT_EMULATED",
      "metadata.rawPayload=true is not emulated by the Dapr stand-in",
    );
    return false;
  }
  return true;
}

/**
 * When the message becomes deliverable: `ScheduledEnqueueTimeUtc` when the sidecar emulates
 * Service Bus (`honourScheduledEnqueueTime`), else now. Undefined for an unparsable time.
 */
export function visibleAtFor(
  context: SidecarContext,
  metadata: Readonly<Record<string, string>>,
  now: Date,
): Date | undefined {
  const scheduled = metadata[SCHEDULED_ENQUEUE_TIME_KEY];
  if (!context.honourScheduledEnqueueTime || scheduled === undefined || scheduled === "") return now;
  const at = parseScheduledEnqueueTime(scheduled);
  if (at === undefined) return undefined;
  return at.getTime() > now.getTime() ? at : now;
}

/** The Service Bus component's error (components-contrib common/component/azure/servicebus/message.go). */
export function invalidScheduledTimeError(): string {
  return `invalid time format for ${SCHEDULED_ENQUEUE_TIME_KEY}; expected HTTP time format or RFC3339`;
}

export function invalidScheduledTimeMessage(pubsubName: string, topic: string): string {
  return `error when publishing to topic ${topic} in pubsub ${pubsubName}: ${invalidScheduledTimeError()}`;
}

function sendInvalidScheduledTime(response: ServerResponse, pubsubName: string, topic: string): void {
  sendDaprError(
    response,
    500,
    "ERR_PUBSUB_PUBLISH_MESSAGE",
    invalidScheduledTimeMessage(pubsubName, topic),
    "DAPR_PUBSUB_PUBLISH_MESSAGE",
  );
}

export function parseScheduledEnqueueTime(value: string): Date | undefined {
  if (!HTTP_DATE.test(value) && !RFC3339.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : new Date(at);
}
