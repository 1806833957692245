import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { buildCloudEvent, CloudEventError, mediaTypeOf, type CloudEvent } from "./cloud-event.ts";
import { headerValue, metadataFromQuery, readBody, sendDaprError, sendEmpty, sendJson } from "./http-util.ts";
import {
  checkPublishTarget,
  handToBroker,
  invalidScheduledTimeMessage,
  sendCloudEventCreationError,
  visibleAtFor,
} from "./publish-api.ts";
import type { SidecarContext } from "./sidecar-context.ts";

/**
 * `POST|PUT /v1.0-alpha1/publish/bulk/<pubsubname>/<topic>[?metadata.<key>=<value>]` (pub/sub API
 * reference, "Publish multiple messages to a given topic"; daprd `onBulkPublish`):
 * - the body is a JSON array of `{entryId, event, contentType, metadata?}`; every entryId must be
 *   present and unique (else 400 ERR_PUBSUB_EVENTS_SER, nothing published);
 * - `event` is converted by its contentType as daprd's ConvertEventToBytes does: JSON for
 *   `application/json`, `+json` and `application/cloudevents+json`, a string for `text/*` and
 *   `…/xml`, base64 for `application/octet-stream`; anything else (or a mismatch, or no
 *   contentType) is 400 ERR_PUBSUB_EVENTS_SER, nothing published;
 * - each entry becomes a CloudEvent like a single publish, with the entry's metadata merged over
 *   the request's as overrides (`cloudevent.id`, `cloudevent.type`, …). As in daprd, an entry
 *   without metadata gets none: the request's metadata is then not applied to it;
 * - the bulk is NOT atomic: every entry is published on its own; 204 when all went out, else 500
 *   with `{failedEntries: [{entryId, error}], errorCode: "ERR_PUBSUB_PUBLISH_MESSAGE"}` while the
 *   other entries are published. A failure comes from `broker.failNextPublish`, or an entry whose
 *   `ScheduledEnqueueTimeUtc` does not parse (the Service Bus component refuses that message).
 */

const entrySchema = z.looseObject({
  entryId: z.string().optional(),
  event: z.unknown().optional(),
  contentType: z.string().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
});
const bodySchema = z.array(entrySchema);
type Entry = z.infer<typeof entrySchema>;

class EventConversionError extends Error {}

export async function handleBulkPublish(
  context: SidecarContext,
  request: IncomingMessage,
  response: ServerResponse,
  pubsubName: string,
  topic: string,
  query: URLSearchParams,
): Promise<void> {
  const requestMetadata = metadataFromQuery(query);
  if (!checkPublishTarget(context, response, pubsubName, topic, requestMetadata)) return;

  const entries = parseEntries(await readBody(request));
  if (entries === undefined) {
    return eventsError(response, pubsubName, topic, "error when unmarshalling the request body");
  }
  const ids = new Set<string>();
  for (const entry of entries) {
    if (entry.entryId === undefined || entry.entryId === "" || ids.has(entry.entryId)) {
      return eventsError(response, pubsubName, topic, "entryId is duplicated or not present for entry");
    }
    ids.add(entry.entryId);
  }

  const now = new Date();
  const prepared: Array<{ entryId: string; cloudEvent: CloudEvent; metadata: Record<string, string> }> = [];
  for (const entry of entries) {
    // daprd merges the request's metadata only into entries that carry metadata of their own.
    const metadata = entry.metadata === undefined ? {} : { ...requestMetadata, ...entry.metadata };
    let body: Buffer;
    try {
      body = eventToBytes(entry);
    } catch (error) {
      if (!(error instanceof EventConversionError)) throw error;
      return eventsError(response, pubsubName, topic, error.message);
    }
    try {
      const cloudEvent = buildCloudEvent({
        sourceAppId: context.appId,
        pubsubName,
        topic,
        contentType: entry.contentType,
        body,
        metadata,
        traceparent: headerValue(request, "traceparent"),
        tracestate: headerValue(request, "tracestate"),
        now,
      });
      prepared.push({ entryId: entry.entryId!, cloudEvent, metadata });
    } catch (error) {
      if (!(error instanceof CloudEventError)) throw error;
      sendCloudEventCreationError(response, error);
      return;
    }
  }

  const failedEntries: Array<{ entryId: string; error: string }> = [];
  for (const { entryId, cloudEvent, metadata } of prepared) {
    const visibleAt = visibleAtFor(context, metadata, now);
    const refusal =
      visibleAt === undefined
        ? invalidScheduledTimeMessage(pubsubName, topic)
        : context.broker.internals.takePublishFailure(cloudEvent.id);
    if (visibleAt === undefined || refusal !== undefined) {
      failedEntries.push({ entryId, error: refusal ?? "refused" });
      continue;
    }
    handToBroker(context, { pubsubName, topic, cloudEvent, metadata, now, visibleAt });
  }
  context.log(
    "debug",
    `bulk published ${prepared.length - failedEntries.length} of ${prepared.length} CloudEvents to ${pubsubName}/${topic}`,
  );
  if (failedEntries.length === 0) {
    sendEmpty(response);
    return;
  }
  sendJson(response, 500, { failedEntries, errorCode: "ERR_PUBSUB_PUBLISH_MESSAGE" });
}

function parseEntries(raw: Buffer): Entry[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(raw.toString("utf8"));
  } catch {
    return undefined;
  }
  const parsed = bodySchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

/** daprd's ConvertEventToBytes. */
function eventToBytes(entry: Entry): Buffer {
  const mediaType = mediaTypeOf(entry.contentType);
  const mismatch = new EventConversionError("error: mismatch between contentType and event");
  if (mediaType === "application/octet-stream") {
    if (typeof entry.event !== "string") throw mismatch;
    return Buffer.from(entry.event, "base64");
  }
  if (mediaType.startsWith("text/") || mediaType.endsWith("/xml")) {
    if (typeof entry.event !== "string") throw mismatch;
    return Buffer.from(entry.event, "utf8");
  }
  if (mediaType === "application/json" || mediaType.endsWith("+json")) {
    return Buffer.from(JSON.stringify(entry.event ?? null), "utf8");
  }
  throw mismatch;
}

function eventsError(response: ServerResponse, pubsubName: string, topic: string, detail: string): void {
  sendDaprError(
    response,
    400,
    "ERR_PUBSUB_EVENTS_SER",
    `error marshaling events to bytes for topic ${topic} pubsub ${pubsubName}. error: ${detail}`,
    "DAPR_PUBSUB_MARSHAL_EVENTS",
  );
}
