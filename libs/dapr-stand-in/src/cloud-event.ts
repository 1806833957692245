import { randomBytes, randomUUID } from "node:crypto";

/**
 * CloudEvents 1.0 envelopes as daprd builds them on `POST /v1.0/publish` (see "Publishing &
 * subscribing messages with CloudEvents" and components-contrib `NewCloudEventsEnvelope`):
 * - a plain body is wrapped: id (uuid), source (app id), type `com.dapr.event.sent`, specversion 1.0,
 *   datacontenttype (request Content-Type, default text/plain), data, topic, pubsubname, time,
 *   traceid/traceparent/tracestate;
 * - metadata `cloudevent.id|source|type|traceid|traceparent|tracestate` override the generated
 *   values (key match is case-insensitive, like daprd's mapstructure decoding);
 * - an `application/cloudevents+json` body is taken as the app's own CloudEvent: only missing
 *   attributes are filled in and topic/pubsubname are set; the overrides above do not apply.
 */

export interface CloudEvent {
  readonly id: string;
  readonly source: string;
  readonly type: string;
  readonly specversion: string;
  readonly [attribute: string]: unknown;
}

export interface CloudEventInput {
  readonly sourceAppId: string;
  readonly pubsubName: string;
  readonly topic: string;
  /** The request Content-Type header, if any. */
  readonly contentType: string | undefined;
  readonly body: Buffer;
  /** Publish metadata (the `metadata.<key>` query parameters without the prefix). */
  readonly metadata: Readonly<Record<string, string>>;
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
  readonly now: Date;
}

export class CloudEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CloudEventError";
  }
}

export const DEFAULT_EVENT_TYPE = "com.dapr.event.sent";
export const CLOUD_EVENT_CONTENT_TYPE = "application/cloudevents+json";
const DEFAULT_DATA_CONTENT_TYPE = "text/plain";
const TTL_METADATA_KEY = "ttlInSeconds";

export function buildCloudEvent(input: CloudEventInput): CloudEvent {
  const mediaType = mediaTypeOf(input.contentType);
  const event =
    mediaType === CLOUD_EVENT_CONTENT_TYPE
      ? completeAppCloudEvent(input)
      : wrapInCloudEvent(input, mediaType);
  const expiration = expirationFromTtl(input.metadata, input.now);
  // daprd stamps `expiration` for components without native message TTL and drops the event on
  // delivery once it has passed; the stand-in behaves like such a component.
  return expiration === undefined ? event : { ...event, expiration };
}

function wrapInCloudEvent(input: CloudEventInput, mediaType: string): CloudEvent {
  const override = (attribute: string): string | undefined =>
    metadataValue(input.metadata, `cloudevent.${attribute}`);
  const traceparent = override("traceparent") ?? override("traceid") ?? input.traceparent ?? newTraceparent();
  const dataContentType = input.contentType?.trim() || DEFAULT_DATA_CONTENT_TYPE;
  const data = encodeData(mediaType || DEFAULT_DATA_CONTENT_TYPE, input.body);
  return {
    id: override("id") ?? randomUUID(),
    source: override("source") ?? input.sourceAppId,
    type: override("type") ?? DEFAULT_EVENT_TYPE,
    specversion: "1.0",
    datacontenttype: dataContentType,
    ...data,
    topic: input.topic,
    pubsubname: input.pubsubName,
    time: formatRfc3339(input.now),
    traceid: override("traceid") ?? traceparent,
    traceparent,
    tracestate: override("tracestate") ?? input.tracestate ?? "",
  };
}

function completeAppCloudEvent(input: CloudEventInput): CloudEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(input.body.toString("utf8"));
  } catch (error) {
    throw new CloudEventError(
      `body is not valid JSON for content type ${CLOUD_EVENT_CONTENT_TYPE}: ${(error as Error).message}`,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new CloudEventError(`a ${CLOUD_EVENT_CONTENT_TYPE} body must be a JSON object`);
  }
  const appEvent = parsed as Record<string, unknown>;
  if (typeof appEvent.id !== "string" || appEvent.id === "") {
    throw new CloudEventError("the CloudEvent is missing the required attribute id");
  }
  const traceparent = stringOr(appEvent.traceparent, input.traceparent ?? newTraceparent());
  return {
    ...appEvent,
    id: appEvent.id,
    source: stringOr(appEvent.source, "Dapr"),
    type: stringOr(appEvent.type, DEFAULT_EVENT_TYPE),
    specversion: stringOr(appEvent.specversion, "1.0"),
    time: stringOr(appEvent.time, formatRfc3339(input.now)),
    traceparent,
    traceid: stringOr(appEvent.traceid, traceparent),
    tracestate: stringOr(appEvent.tracestate, input.tracestate ?? ""),
    topic: input.topic,
    pubsubname: input.pubsubName,
  };
}

function encodeData(mediaType: string, body: Buffer): Record<string, unknown> {
  if (mediaType === "application/json" || mediaType.endsWith("+json")) {
    // daprd falls back to the raw text when the body does not parse as JSON.
    try {
      return { data: JSON.parse(body.toString("utf8")) as unknown };
    } catch {
      return { data: body.toString("utf8") };
    }
  }
  if (mediaType === "application/octet-stream") return { data_base64: body.toString("base64") };
  return { data: body.toString("utf8") };
}

function expirationFromTtl(metadata: Readonly<Record<string, string>>, now: Date): string | undefined {
  const raw = metadata[TTL_METADATA_KEY];
  if (raw === undefined) return undefined;
  const seconds = Number(raw);
  // daprd ignores an unparsable or non-positive TTL rather than failing the publish.
  if (!Number.isInteger(seconds) || seconds <= 0) return undefined;
  return formatRfc3339(new Date(now.getTime() + seconds * 1000));
}

export function hasExpired(event: CloudEvent, now: Date): boolean {
  const expiration = event.expiration;
  if (typeof expiration !== "string") return false;
  const at = Date.parse(expiration);
  return !Number.isNaN(at) && at <= now.getTime();
}

export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

function metadataValue(metadata: Readonly<Record<string, string>>, key: string): string | undefined {
  const wanted = key.toLowerCase();
  for (const [candidate, value] of Object.entries(metadata)) {
    if (candidate.toLowerCase() === wanted && value !== "") return value;
  }
  return undefined;
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === "string" && value !== "" ? value : fallback;
}

/** RFC 3339 in UTC with second precision, like Go's `time.RFC3339` layout. */
export function formatRfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

function newTraceparent(): string {
  return `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`;
}
