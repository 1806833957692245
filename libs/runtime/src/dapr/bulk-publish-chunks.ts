/**
 * Splits one topic's messages into bulk publish requests that every broker takes whole.
 *
 * Azure Service Bus sends a bulk publish as one message batch of at most `maxBulkPubBytes`,
 * 128 KiB by default (components-contrib common/component/azure/servicebus/publisher.go,
 * defaultMaxBulkPubBytes); a batch that does not fit fails the whole request, and a retried
 * request fails the same way forever. So a request is bounded by size as well as by count. The
 * size is estimated above what the broker counts: daprd wraps each body in a CloudEvent (id,
 * source, type, topic, pubsub name, trace context: well under ENVELOPE_BYTES) and the metadata
 * become application properties.
 */
export const BULK_PUBLISH_MAX_ENTRIES = 100;
/** Under Service Bus's default 128 KiB batch, with room for what the estimate cannot see. */
export const BULK_PUBLISH_MAX_BYTES = 100 * 1024;
/** What daprd's CloudEvent envelope and the broker's per-message framing add, at most. */
const ENVELOPE_BYTES = 640;

export interface SizedMessage {
  readonly body: unknown;
  readonly properties: Readonly<Record<string, string>>;
}

export function estimatedPublishBytes(message: SizedMessage): number {
  let bytes = ENVELOPE_BYTES + Buffer.byteLength(JSON.stringify(message.body ?? null), "utf8");
  for (const [key, value] of Object.entries(message.properties)) {
    bytes += Buffer.byteLength(key, "utf8") + Buffer.byteLength(value, "utf8") + 16;
  }
  return bytes;
}

/**
 * Consecutive chunks of at most `maxEntries` messages and `maxBytes` estimated bytes, in order; a
 * message larger than `maxBytes` on its own goes alone (the broker judges it as a single message).
 */
export function chunkForBulkPublish<T extends SizedMessage>(
  messages: readonly T[],
  limits: { readonly maxEntries: number; readonly maxBytes: number } = {
    maxEntries: BULK_PUBLISH_MAX_ENTRIES,
    maxBytes: BULK_PUBLISH_MAX_BYTES,
  },
): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let currentBytes = 0;
  for (const message of messages) {
    const bytes = estimatedPublishBytes(message);
    if (
      current.length > 0 &&
      (current.length >= limits.maxEntries || currentBytes + bytes > limits.maxBytes)
    ) {
      chunks.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(message);
    currentBytes += bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
