import { describe, expect, it } from "vitest";
import { BULK_PUBLISH_MAX_BYTES, chunkForBulkPublish, estimatedPublishBytes } from "./bulk-publish-chunks.ts";

const message = (index: number, bodyBytes: number) => ({
  id: `m-${index}`,
  body: { Payload: "x".repeat(bodyBytes) },
  properties: { MessageType: "job", WorkerId: "worker-01" },
});

describe("bulk publish chunks (Service Bus takes a batch of at most 128 KiB whole, or fails it)", () => {
  it("keeps 100 small messages in one request", () => {
    const chunks = chunkForBulkPublish(Array.from({ length: 100 }, (_, i) => message(i, 100)));
    expect(chunks.map((chunk) => chunk.length)).toEqual([100]);
  });

  it("splits 100 messages of 2 KiB (over 128 KiB together) into requests under the byte limit, in order", () => {
    const messages = Array.from({ length: 100 }, (_, i) => message(i, 2048));
    const chunks = chunkForBulkPublish(messages);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      const bytes = chunk.reduce((sum, entry) => sum + estimatedPublishBytes(entry), 0);
      expect(bytes).toBeLessThanOrEqual(BULK_PUBLISH_MAX_BYTES);
      // What Service Bus counts (the serialized bodies) stays under its 128 KiB default.
      expect(chunk.reduce((sum, entry) => sum + JSON.stringify(entry.body).length, 0)).toBeLessThan(
        128 * 1024,
      );
    }
    expect(chunks.flat().map((entry) => entry.id)).toEqual(messages.map((entry) => entry.id));
  });

  it("sends a message larger than the limit on its own, and still caps a request at 100 entries", () => {
    const chunks = chunkForBulkPublish([message(0, 10), message(1, 200 * 1024), message(2, 10)]);
    expect(chunks.map((chunk) => chunk.map((entry) => entry.id))).toEqual([["m-0"], ["m-1"], ["m-2"]]);
    const many = chunkForBulkPublish(Array.from({ length: 250 }, (_, i) => message(i, 1)));
    expect(many.map((chunk) => chunk.length)).toEqual([100, 100, 50]);
  });
});
