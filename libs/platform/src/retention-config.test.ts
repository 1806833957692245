import { describe, expect, it } from "vitest";
import { retentionConfigFromEnv } from "./retention-config.ts";

describe("retentionConfigFromEnv", () => {
  it("defaults to 90 days, scrubbing", () => {
    expect(retentionConfigFromEnv({})).toEqual({ retentionDays: 90, retentionMode: "scrub" });
    expect(retentionConfigFromEnv({ MATOOLKIT_RETENTION_DAYS: " ", MATOOLKIT_RETENTION_MODE: "" })).toEqual({
      retentionDays: 90,
      retentionMode: "scrub",
    });
  });

  it("takes days, 0 and off (both: retention off), and the delete mode", () => {
    expect(retentionConfigFromEnv({ MATOOLKIT_RETENTION_DAYS: "30" }).retentionDays).toBe(30);
    expect(retentionConfigFromEnv({ MATOOLKIT_RETENTION_DAYS: "0" }).retentionDays).toBe(0);
    expect(retentionConfigFromEnv({ MATOOLKIT_RETENTION_DAYS: "OFF" }).retentionDays).toBe(0);
    expect(retentionConfigFromEnv({ MATOOLKIT_RETENTION_MODE: "Delete" }).retentionMode).toBe("delete");
  });

  it.each(["-1", "1.5", "ninety", "36501"])(
    "refuses MATOOLKIT_RETENTION_DAYS=%s naming the variable",
    (value) => {
      expect(() => retentionConfigFromEnv({ MATOOLKIT_RETENTION_DAYS: value })).toThrow(
        /^Invalid configuration: MATOOLKIT_RETENTION_DAYS: must be a whole number of days/,
      );
    },
  );

  it("refuses an unknown mode naming the variable", () => {
    expect(() => retentionConfigFromEnv({ MATOOLKIT_RETENTION_MODE: "shred" })).toThrow(
      'Invalid configuration: MATOOLKIT_RETENTION_MODE: must be "scrub" or "delete"',
    );
  });
});
