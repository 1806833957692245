import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MatoolkitError, NonRetriableError, RetryAfterError } from "./matoolkit-error.ts";
import { isReasonCode, reasonCodes } from "./reason-codes.ts";
import { InvalidMessageError } from "./invalid-message-error.ts";
import { toSafeError } from "./safe-error.ts";

describe("reason codes", () => {
  it("are unique, lowercase and dot-separated (FR-013)", () => {
    const codes = Object.values(reasonCodes);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^[a-z_]+(\.[a-z_]+)+$/);
  });

  it("recognises only known codes read back from storage", () => {
    expect(isReasonCode("graph.throttled")).toBe(true);
    expect(isReasonCode("Graph.Throttled")).toBe(false);
    expect(isReasonCode("toString")).toBe(false);
  });
});

describe("error classes", () => {
  it("carry the retry policy in their type", () => {
    const nonRetriable = new NonRetriableError("worker.unknown_function", "No function New-Foo");
    const retryAfter = new RetryAfterError("graph.throttled", "Graph throttled", 12.2);
    expect(nonRetriable).toBeInstanceOf(MatoolkitError);
    expect(nonRetriable).toMatchObject({ name: "NonRetriableError", retriable: false });
    expect(retryAfter).toMatchObject({ name: "RetryAfterError", retriable: true, retryAfterSeconds: 13 });
    expect(new MatoolkitError("worker.error", "boom").retriable).toBe(true);
    expect(new MatoolkitError("worker.error", "boom", { retriable: false }).retriable).toBe(false);
  });

  it("sanitize their message on construction but keep the cause for debugging", () => {
    const cause = new Error("raw");
    const error = new NonRetriableError("graph.not_found", "User jdoe@contoso.com not found", { cause });
    expect(error.message).toBe("User [email] not found");
    expect(error.cause).toBe(cause);
  });

  it("reject a nonsensical Retry-After", () => {
    expect(() => new RetryAfterError("graph.throttled", "x", -1)).toThrow(RangeError);
    expect(() => new RetryAfterError("graph.throttled", "x", Number.NaN)).toThrow(RangeError);
  });
});

describe("toSafeError", () => {
  it("keeps the reason and retry policy of known errors", () => {
    expect(toSafeError(new RetryAfterError("graph.throttled", "Too many requests", 30))).toEqual({
      reason: "graph.throttled",
      message: "Too many requests",
      retriable: true,
    });
  });

  it("re-sanitizes a message changed after construction", () => {
    const error = new MatoolkitError("worker.error", "ok");
    error.message = "failed for jdoe@contoso.com";
    expect(toSafeError(error).message).toBe("failed for [email]");
  });

  it("maps validation failures to a non-retriable validation.invalid_input without echoing values", () => {
    const parsed = z.object({ BatchId: z.number() }).safeParse({ BatchId: "jdoe@contoso.com" });
    expect(parsed.success).toBe(false);
    const safe = toSafeError(parsed.error);
    expect(safe).toMatchObject({ reason: "validation.invalid_input", retriable: false });
    expect(safe.message).toContain("BatchId");
    expect(safe.message).not.toContain("jdoe");
  });

  it("maps anything else to unexpected.exception with a sanitized, short message", () => {
    const safe = toSafeError(new TypeError(`Cannot read 'x' for jdoe@contoso.com ${"y".repeat(300)}`));
    expect(safe.reason).toBe("unexpected.exception");
    expect(safe.retriable).toBe(true);
    expect(safe.message.startsWith("TypeError: Cannot read 'x' for [email]")).toBe(true);
    expect(safe.message.length).toBeLessThanOrEqual(200);
    expect(toSafeError("password=hunter2 rejected").message).toBe("password=[redacted] rejected");
    expect(toSafeError({ secret: "x" }).message).toBe("Unexpected error");
    expect(toSafeError(undefined).message).toBe("Unexpected error");
  });
});

describe("InvalidMessageError", () => {
  it("names the failing fields and problems, never the values, and is not retried", () => {
    const schema = z.object({ BatchId: z.number(), Upn: z.string() });
    const parsed = schema.safeParse({ BatchId: "jdoe@contoso.com", Upn: 7 });
    if (parsed.success) throw new Error("expected the body to be invalid");
    const error = new InvalidMessageError("phase-due body", parsed.error);
    expect(error.message).toBe("Invalid phase-due body: BatchId invalid_type; Upn invalid_type");
    expect(error.reason).toBe("message.invalid");
    expect(error.retriable).toBe(false);
    expect(error.message).not.toContain("jdoe");
  });
});
