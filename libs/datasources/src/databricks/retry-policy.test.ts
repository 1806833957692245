import { describe, expect, it } from "vitest";
import { isTransient, parseRetryAfter, retryDelayMs } from "./retry-policy.ts";

const policy = { maxRetries: 5, baseDelayMs: 500, maxDelayMs: 30_000 };
const now = Date.parse("2030-01-01T10:00:00Z");

describe("Retry-After", () => {
  it("reads delta-seconds and HTTP dates, and ignores anything else", () => {
    expect(parseRetryAfter("7", now)).toBe(7_000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("Tue, 01 Jan 2030 10:00:12 GMT", now)).toBe(12_000);
    expect(parseRetryAfter("Tue, 01 Jan 2030 09:59:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it("is honoured up to the cap; without it the backoff doubles, with jitter, up to the cap", () => {
    expect(retryDelayMs(0, 4_000, policy)).toBe(4_000);
    expect(retryDelayMs(0, 600_000, policy)).toBe(30_000);
    expect(retryDelayMs(0, undefined, policy, () => 0)).toBe(250);
    expect(retryDelayMs(0, undefined, policy, () => 1)).toBe(500);
    expect(retryDelayMs(3, undefined, policy, () => 1)).toBe(4_000);
    expect(retryDelayMs(12, undefined, policy, () => 1)).toBe(30_000);
  });
});

describe("transient failures", () => {
  it("are 429, 503 and TEMPORARILY_UNAVAILABLE; other 4xx and 5xx are not", () => {
    expect(isTransient(429, undefined)).toBe(true);
    expect(isTransient(503, undefined)).toBe(true);
    expect(isTransient(500, "TEMPORARILY_UNAVAILABLE")).toBe(true);
    expect(isTransient(400, "BAD_REQUEST")).toBe(false);
    expect(isTransient(403, "PERMISSION_DENIED")).toBe(false);
    expect(isTransient(500, "INTERNAL_ERROR")).toBe(false);
  });
});
