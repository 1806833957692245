import { describe, expect, it } from "vitest";
import { failureOf } from "../../test/failure-of.ts";
import { downloadChunk } from "./chunk-download.ts";
import { defaultRetryPolicy } from "./retry-policy.ts";

describe("an external link download", () => {
  it("refuses a plain-http link off loopback without sending anything, and never echoes the link", async () => {
    const calls: unknown[] = [];
    const recordingFetch = (async (...args: unknown[]) => {
      calls.push(args);
      throw new Error("no network in tests");
    }) as typeof fetch;
    const link = { external_link: "http://storage.example.net/chunk0?sig=secret-signature", chunk_index: 0 };

    const error = await failureOf(
      downloadChunk(link, {
        fetch: recordingFetch,
        signal: new AbortController().signal,
        policy: defaultRetryPolicy,
      }),
    );

    expect(error.message).toBe("databricks source: result chunk 0: the external link is not an https URL");
    expect(calls).toEqual([]);
  });
});
