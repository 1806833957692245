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
  if (pubsubName === "") {
    sendDaprError(response, 404, "ERR_PUBSUB_EMPTY", "pubsub name is empty", "DAPR_PUBSUB_NAME_EMPTY");
    return;
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
    return;
  }
  if (topic === "") {
    sendDaprError(
      response,
      404,
      "ERR_TOPIC_EMPTY",
      `topic is empty in pubsub ${pubsubName}`,
      "DAPR_PUBSUB_TOPIC_NAME_EMPTY",
    );
    return;
  }
  if (metadata.rawPayload?.toLowerCase() === "true") {
    sendDaprError(
      response,
      400,
      "ERR_STAND_IN_NOT_EMULATED",
      "metadata.rawPayload=true is not emulated by the Dapr stand-in",
    );
    return;
  }

  const now = new Date();
  let visibleAt = now;
  const scheduled = metadata[SCHEDULED_ENQUEUE_TIME_KEY];
  if (context.honourScheduledEnqueueTime && scheduled !== undefined && scheduled !== "") {
    const at = parseScheduledEnqueueTime(scheduled);
    if (at === undefined) {
      sendDaprError(
        response,
        500,
        "ERR_PUBSUB_PUBLISH_MESSAGE",
        `error when publishing to topic ${topic} in pubsub ${pubsubName}: invalid time format for ${SCHEDULED_ENQUEUE_TIME_KEY}; expected HTTP time format or RFC3339`,
        "DAPR_PUBSUB_PUBLISH_MESSAGE",
      );
      return;
    }
    if (at.getTime() > now.getTime()) visibleAt = at;
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
    sendDaprError(
      response,
      500,
      "ERR_PUBSUB_CLOUD_EVENTS_SER",
      `cannot create cloudevent: ${error.message}`,
      "DAPR_PUBSUB_CLOUD_EVENT_CREATION",
    );
    return;
  }

  context.broker.internals.pubsub.publish({
    pubsubName,
    topic,
    cloudEvent,
    metadata,
    publishedAt: now,
    publishedBy: context.appId,
    visibleAt,
    deadLetterOf: undefined,
  });
  context.log("debug", `published CloudEvent ${cloudEvent.id} to ${pubsubName}/${topic}`);
  sendEmpty(response);
}

export function parseScheduledEnqueueTime(value: string): Date | undefined {
  if (!HTTP_DATE.test(value) && !RFC3339.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : new Date(at);
}
