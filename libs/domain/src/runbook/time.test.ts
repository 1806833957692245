import { describe, expect, it } from "vitest";
import { InvalidTimeExpressionError, parseDuration, parseOffset } from "./time.ts";

describe("parseOffset", () => {
  it.each([
    ["T-5d", 7200],
    ["T-4h", 240],
    ["T-30m", 30],
    ["T-90s", 2],
    ["T-0", 0],
  ])("%s is %i minutes before batch start (000 offset table)", (text, minutes) => {
    expect(parseOffset(text)).toBe(minutes);
  });

  it("rounds seconds up to whole minutes", () => {
    expect(parseOffset("T-60s")).toBe(1);
    expect(parseOffset("T-61s")).toBe(2);
    expect(parseOffset("T-1s")).toBe(1);
  });

  it.each(["T+1h", "5d", "T-1.5h", "T--3m", "", "T-", "T-5", "T-5w", "t-5d", " T-5d", "T-5D"])(
    "rejects %j naming the value and the allowed form",
    (text) => {
      expect(() => parseOffset(text)).toThrow(InvalidTimeExpressionError);
      expect(() => parseOffset(text)).toThrow(
        `invalid offset ${JSON.stringify(text)}: expected T-<n><d|h|m|s> or T-0`,
      );
    },
  );

  it("rejects offsets too large for the offset_minutes INT column", () => {
    expect(() => parseOffset("T-9999999d")).toThrow(/too large/);
  });

  it("carries a stable reason code", () => {
    expect(() => parseOffset("T+1h")).toThrow(expect.objectContaining({ reason: "runbook.invalid" }));
  });
});

describe("parseDuration", () => {
  it.each([
    ["30s", 30],
    ["1m", 60],
    ["15m", 900],
    ["24h", 86_400],
    ["7d", 604_800],
  ])("%s is %i seconds", (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each(["0s", "-5m", "1.5h", "15", "m", "", "15 m", "PT15M", "3w"])("rejects %j", (text) => {
    expect(() => parseDuration(text)).toThrow(InvalidTimeExpressionError);
    expect(() => parseDuration(text)).toThrow(`invalid duration ${JSON.stringify(text)}`);
  });

  it("names the allowed form in the message", () => {
    expect(() => parseDuration("15")).toThrow(/expected <n><d\|h\|m\|s>/);
  });
});
