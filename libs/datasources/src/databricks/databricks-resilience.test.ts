import { afterEach, describe, expect, it } from "vitest";
import { DataSourceError } from "../datasource-error.ts";
import { failureOf } from "../../test/failure-of.ts";
import {
  chunksOf,
  clientFor,
  columns,
  config,
  fastTiming,
  stopStandIn,
} from "../../test/databricks/databricks-test-support.ts";

/** Throttling, brief outages, failures after submit and cold warehouses. */
afterEach(stopStandIn);

const pending = (polls: number): string[] => Array.from({ length: polls }, () => "PENDING");

describe("databricks retries", () => {
  it("waits as a 429's Retry-After says, then submits again", async () => {
    const { client, standIn } = await clientFor({ states: ["SUCCEEDED"], columns, chunks: chunksOf(1, 2) });
    standIn.failNext("submit", 1, { status: 429, retryAfter: "1" });

    expect(await client.query(config)).toHaveLength(2);

    const submits = standIn.requests.filter((request) => request.method === "POST");
    expect(submits).toHaveLength(2);
    expect((submits[1]?.at ?? 0) - (submits[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it("retries 503 and TEMPORARILY_UNAVAILABLE on polls, chunks and downloads", async () => {
    const { client, standIn } = await clientFor({
      states: ["RUNNING", "SUCCEEDED"],
      columns,
      chunks: chunksOf(2, 2),
    });
    standIn.failNext("poll", 1, { status: 503 });
    standIn.failNext("chunk", 1, { status: 500, errorCode: "TEMPORARILY_UNAVAILABLE" });
    standIn.failNext("download", 2, { status: 503, retryAfter: "0" });
    standIn.failNext("download", 1, { status: 429 });

    expect(await client.query(config)).toHaveLength(4);

    expect(standIn.downloads).toHaveLength(5);
    expect(standIn.cancels()).toBe(0);
  });

  it("gives up after the bounded retries, and cancels the statement", async () => {
    const { client, standIn } = await clientFor(
      { states: ["RUNNING"], columns },
      { timing: { ...fastTiming, retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 30_000 } } },
    );
    standIn.failNext("poll", 10, { status: 429 });

    const error = await failureOf(client.query(config));

    expect(error.message).toBe(
      "databricks source: HTTP 429 from GET /api/2.0/sql/statements/01ef-standin-statement: REQUEST_LIMIT_EXCEEDED injected by the stand-in",
    );
    expect(standIn.requests.filter((request) => request.method === "GET")).toHaveLength(3);
    expect(standIn.cancels()).toBe(1);
  });
});

describe("databricks statements are cancelled on any failure after submit", () => {
  it("cancels when a status poll fails with a 5xx", async () => {
    const { client, standIn } = await clientFor({ states: ["RUNNING", "SUCCEEDED"], columns });
    standIn.failNext("poll", 1, { status: 500 });

    const error = await failureOf(client.query(config));

    expect(error.message).toBe(
      "databricks source: HTTP 500 from GET /api/2.0/sql/statements/01ef-standin-statement: INTERNAL_ERROR injected by the stand-in",
    );
    expect(standIn.cancels()).toBe(1);
  });

  it("cancels when a chunk download fails for good", async () => {
    const { client, standIn } = await clientFor({ states: ["SUCCEEDED"], columns, chunks: chunksOf(2, 2) });
    standIn.failNext("download", 1, { status: 500 });

    const error = await failureOf(client.query(config));

    expect(error.message).toBe("databricks source: result chunk 0: HTTP 500 from the result download");
    expect(standIn.cancels()).toBe(1);
  });
});

describe("a cold warehouse", () => {
  it("may stay PENDING longer than the query timeout, within the warehouse start cap", async () => {
    const { client, standIn } = await clientFor(
      { states: [...pending(12), "RUNNING", "SUCCEEDED"], columns, chunks: chunksOf(1, 2) },
      { timeoutMs: 300, warehouseStartTimeoutMs: 5_000 },
    );

    expect(await client.query(config)).toHaveLength(2);

    const polls = standIn.requests.filter((request) => request.method === "GET");
    expect((polls.at(-1)?.at ?? 0) - (standIn.requests[0]?.at ?? 0)).toBeGreaterThan(300);
    expect(standIn.cancels()).toBe(0);
  });

  it("fails with a clear, retriable error past the cap, and cancels the statement", async () => {
    const { client, standIn } = await clientFor(
      { states: ["PENDING"], columns },
      { timeoutMs: 2_000, warehouseStartTimeoutMs: 300 },
    );

    const error = await failureOf(client.query(config));

    expect(error).toBeInstanceOf(DataSourceError);
    expect(error.message).toBe("databricks source: warehouse did not start within 0.3 s");
    expect((error as DataSourceError).retriable).toBe(true);
    expect(standIn.cancels()).toBe(1);
  });

  it("starts the query's own budget when the statement leaves PENDING", async () => {
    const { client, standIn } = await clientFor(
      { states: [...pending(3), "RUNNING"], columns },
      { timeoutMs: 300, warehouseStartTimeoutMs: 5_000 },
    );

    await expect(client.query(config)).rejects.toThrow("databricks source: query timed out after 0.3 s");
    expect(standIn.cancels()).toBe(1);
  });
});
