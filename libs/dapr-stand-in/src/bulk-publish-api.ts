import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { buildCloudEvent, CloudEventError, mediaTypeOf, type CloudEvent } from "./cloud-event.ts";
import { headerValue, metadataFromQuery, readBody, sendDaprError, sendEmpty, sendJson } from "./http-util.ts";
import {
  checkPublishTarget,
  handToBroker,
  invalidScheduledTimeError,
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
 * - when the sidecar emulates Azure Service Bus (`honourScheduledEnqueueTime`), the component
 *   sends the whole request as ONE message batch (components-contrib
 *   common/component/azure/servicebus/publisher.go PublishPubSubBulk): the batch holds at most
 *   `maxBulkPubBytes` (request metadata, default `defaultMaxBulkPubBytes` = 128 KiB), and an entry
 *   that does not fit, or whose `ScheduledEnqueueTimeUtc` does not parse (message.go
 *   addMetadataToMessage), fails the request whole: 500 with every entry in `failedEntries`
 *   under that one error (`pubsub.NewBulkPublishResponse(req.Entries, err)`), nothing published;
 * - otherwise the bulk is NOT atomic (daprd's default bulk publisher publishes each entry on its
 *   own): 204 when all went out, else 500 with `{failedEntries: [{entryId, error}], errorCode:
 *   "ERR_PUBSUB_PUBLISH_MESSAGE"}` while the other entries are published. Such a per-entry failure
 *   is the fault `broker.failNextPublish` injects (under Service Bus too, once the batch fits).
 */

/** azservicebus ErrMessageTooLarge, which the component returns for the entry that does not fit. */
const MESSAGE_TOO_LARGE = "the message could not be added because it is too large for the batch";
/** components-contrib common/component/azure/servicebus/publisher.go defaultMaxBulkPubBytes. */
const SERVICE_BUS_DEFAULT_MAX_BULK_PUB_BYTES = 128 * 1024;
/** components-contrib metadata/utils.go MaxBulkPubBytesKey. */
const MAX_BULK_PUB_BYTES_KEY = "maxBulkPubBytes";
/**
 * What AMQP encoding adds to a message beyond its body and application properties: the header,
 * the properties section (message id, content type `application/cloudevents+json`) and section
 * descriptors. An estimate: the batch below counts the way azservicebus does, this part is not
 * byte-exact.
 */
const AMQP_MESSAGE_OVERHEAD_BYTES = 96;

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

  const batched: Array<(typeof prepared)[number] & { visibleAt: Date }> = [];
  if (context.honourScheduledEnqueueTime) {
    const batchError = serviceBusBatchError(context, prepared, requestMetadata, now, batched);
    if (batchError !== undefined) {
      context.log(
        "debug",
        `bulk publish of ${prepared.length} CloudEvents to ${pubsubName}/${topic} failed whole: ${batchError}`,
      );
      sendJson(response, 500, {
        failedEntries: prepared.map(({ entryId }) => ({ entryId, error: batchError })),
        errorCode: "ERR_PUBSUB_PUBLISH_MESSAGE",
      });
      return;
    }
  } else {
    for (const entry of prepared) batched.push({ ...entry, visibleAt: now });
  }

  const failedEntries: Array<{ entryId: string; error: string }> = [];
  for (const { entryId, cloudEvent, metadata, visibleAt } of batched) {
    const refusal = context.broker.internals.takePublishFailure(cloudEvent.id);
    if (refusal !== undefined) {
      failedEntries.push({ entryId, error: refusal });
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

/**
 * The Service Bus component building its one message batch (components-contrib
 * common/component/azure/servicebus/message_pubsub.go UpdateASBBatchMessageWithBulkPublishRequest):
 * entry by entry, the message is built (an unparsable `ScheduledEnqueueTimeUtc` is an error) and
 * added to a batch of at most `maxBulkPubBytes`; the first error fails the request. The size is
 * counted as azservicebus MessageBatch.addAMQPMessage counts it: the first message's properties
 * form the batch envelope, then each encoded message plus 5 bytes of framing (8 from 256 bytes).
 * The body is the CloudEvent as daprd serialises it; the metadata become application properties.
 * Fills `batched` with each entry's visibility time; returns the error, or undefined if it fits.
 */
function serviceBusBatchError(
  context: SidecarContext,
  prepared: ReadonlyArray<{ entryId: string; cloudEvent: CloudEvent; metadata: Record<string, string> }>,
  requestMetadata: Readonly<Record<string, string>>,
  now: Date,
  batched: Array<{
    entryId: string;
    cloudEvent: CloudEvent;
    metadata: Record<string, string>;
    visibleAt: Date;
  }>,
): string | undefined {
  const maxBytes = maxBulkPubBytes(requestMetadata);
  let size = 0;
  for (const entry of prepared) {
    const visibleAt = visibleAtFor(context, entry.metadata, now);
    if (visibleAt === undefined) return invalidScheduledTimeError();
    const properties = applicationPropertyBytes(entry.metadata);
    const encoded =
      AMQP_MESSAGE_OVERHEAD_BYTES + Buffer.byteLength(JSON.stringify(entry.cloudEvent), "utf8") + properties;
    const envelope = batched.length === 0 ? AMQP_MESSAGE_OVERHEAD_BYTES + properties : 0;
    const added = envelope + encoded + (encoded < 256 ? 5 : 8);
    if (size + added > maxBytes) return MESSAGE_TOO_LARGE;
    size += added;
    batched.push({ ...entry, visibleAt });
  }
  return undefined;
}

/** `maxBulkPubBytes` from the request metadata as GetElemOrDefaultFromMap reads it (ParseUint). */
function maxBulkPubBytes(requestMetadata: Readonly<Record<string, string>>): number {
  const raw = requestMetadata[MAX_BULK_PUB_BYTES_KEY];
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : SERVICE_BUS_DEFAULT_MAX_BULK_PUB_BYTES;
}

/** Metadata with a value becomes an application property (message.go addMetadataToMessage). */
function applicationPropertyBytes(metadata: Readonly<Record<string, string>>): number {
  let bytes = 0;
  for (const [key, value] of Object.entries(metadata)) {
    if (value === "") continue;
    // AMQP str8/str32 constructors and the map entry framing around key and value.
    bytes += Buffer.byteLength(key, "utf8") + Buffer.byteLength(value, "utf8") + 4;
  }
  return bytes;
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
