import { describe, expect, it } from "vitest";
import { resolveEffectiveRetry } from "./effective-retry.ts";

const GLOBAL = { maxRetries: 2, intervalSeconds: 60 };

describe("resolveEffectiveRetry", () => {
  it("uses the global retry when the step has none", () => {
    expect(resolveEffectiveRetry({}, GLOBAL)).toEqual(GLOBAL);
  });

  it("lets a step-level retry replace the global one entirely", () => {
    const step = { retry: { maxRetries: 3, intervalSeconds: 30 } };
    expect(resolveEffectiveRetry(step, GLOBAL)).toEqual({ maxRetries: 3, intervalSeconds: 30 });
  });

  it("treats max_retries: 0 as an explicit opt-out even with a global retry", () => {
    expect(resolveEffectiveRetry({ retry: { maxRetries: 0, intervalSeconds: 0 } }, GLOBAL)).toBeUndefined();
  });

  it("does not retry without any retry config", () => {
    expect(resolveEffectiveRetry({}, undefined)).toBeUndefined();
  });
});
