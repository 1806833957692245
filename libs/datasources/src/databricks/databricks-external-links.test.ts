import { afterEach, describe, expect, it } from "vitest";
import {
  chunksOf,
  clientFor,
  columns,
  config,
  stopStandIn,
} from "../../test/databricks/databricks-test-support.ts";

/**
 * Results of any size: EXTERNAL_LINKS chunks downloaded from cloud storage (not the workspace),
 * without the workspace token, renewed when expired, streamed row by row.
 */
afterEach(stopStandIn);

describe("databricks results through EXTERNAL_LINKS", () => {
  it("reads a result over the INLINE byte limit completely (INLINE would abort the statement)", async () => {
    const chunks = chunksOf(3, 40);
    const { client, standIn } = await clientFor({
      states: ["RUNNING", "SUCCEEDED"],
      columns,
      chunks,
      inlineByteLimit: 2_000,
    });

    const rows = await client.query(config);

    expect(rows).toHaveLength(120);
    expect(rows.map((each) => each.upn)).toEqual(chunks.flat().map((values) => values[0]));
    expect(standIn.requests[0]?.body).toMatchObject({ disposition: "EXTERNAL_LINKS", format: "JSON_ARRAY" });
    expect(standIn.downloads).toHaveLength(3);
  });

  it("runs an INLINE preview again with EXTERNAL_LINKS when its rows pass the INLINE byte limit", async () => {
    const { client, standIn } = await clientFor({
      states: ["SUCCEEDED"],
      columns,
      chunks: chunksOf(3, 40),
      inlineByteLimit: 2_000,
    });

    expect(await client.query(config, { limit: 50 })).toHaveLength(50);

    const submits = standIn.requests.filter((request) => request.method === "POST");
    expect(submits.map((request) => request.body)).toMatchObject([
      { disposition: "INLINE", row_limit: 50 },
      { disposition: "EXTERNAL_LINKS", row_limit: 50 },
    ]);
    expect(standIn.cancels()).toBe(0);
  });

  it("downloads each link without the workspace token, with the link's own http_headers", async () => {
    const { client, standIn } = await clientFor({
      states: ["SUCCEEDED"],
      columns,
      chunks: chunksOf(2, 3),
      linkHeaders: { "x-amz-server-side-encryption-customer-key": "chunk-key" },
    });

    expect(await client.query(config)).toHaveLength(6);

    expect(standIn.downloads).toHaveLength(2);
    for (const download of standIn.downloads) {
      expect(download.authorization).toBeUndefined();
      expect(download.headers["x-amz-server-side-encryption-customer-key"]).toBe("chunk-key");
    }
  });

  it("renews a link whose expiration has passed through result/chunks/{i}, without trying it", async () => {
    const { client, standIn } = await clientFor({
      states: ["SUCCEEDED"],
      columns,
      chunks: chunksOf(2, 3),
      linksIssuedExpired: 1,
    });

    expect(await client.query(config)).toHaveLength(6);

    const paths = standIn.requests.map((request) => `${request.method} ${request.path}`);
    expect(paths).toContain("GET /api/2.0/sql/statements/01ef-standin-statement/result/chunks/0");
    // Links 2 (chunk 0, renewed) and 3 (chunk 1): the expired link 1 was never sent to storage.
    expect(standIn.downloads.map((download) => download.path)).toEqual([
      "/results/2.json",
      "/results/3.json",
    ]);
  });

  it("renews a link the storage refuses (403) before its stated expiration", async () => {
    const { client, standIn } = await clientFor({
      states: ["SUCCEEDED"],
      columns,
      chunks: chunksOf(2, 3),
      linksRefused: 1,
    });

    expect((await client.query(config)).map((each) => each.upn)).toEqual(
      chunksOf(2, 3)
        .flat()
        .map((values) => values[0]),
    );
    expect(standIn.downloads.map((download) => download.path)).toEqual([
      "/results/1.json",
      "/results/2.json",
      "/results/3.json",
    ]);
  });

  it("streams rows as chunks arrive, and cancels the statement when the consumer stops early", async () => {
    const { client, standIn } = await clientFor({ states: ["SUCCEEDED"], columns, chunks: chunksOf(3, 2) });

    const seen: unknown[] = [];
    for await (const each of client.rows(config)) {
      seen.push(each.upn);
      // Only the first chunk has been downloaded when its first row arrives.
      if (seen.length === 1) expect(standIn.downloads).toHaveLength(1);
      if (seen.length === 3) break;
    }

    expect(seen).toEqual(["m0@contoso.com", "m1@contoso.com", "m2@contoso.com"]);
    expect(standIn.downloads).toHaveLength(2);
    expect(standIn.cancels()).toBe(1);
  });
});
