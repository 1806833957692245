import { describe, expect, it } from "vitest";
import { adminApiConfigFromEnv } from "../admin-api-config.ts";
import { defaultRequestLimits } from "./request-limits.ts";

/** The request limits are read at the service edge, each from its own variable. */
describe("request limits from the environment", () => {
  it("defaults to 20 MB, 100,000 rows, 2 heavy requests per caller and 4 in all", () => {
    expect(adminApiConfigFromEnv({}).requestLimits).toEqual(defaultRequestLimits);
    expect(defaultRequestLimits).toEqual({
      memberUploadBytes: 20 * 1024 * 1024,
      memberRows: 100_000,
      heavyPerCaller: 2,
      heavyTotal: 4,
    });
  });

  it("takes each limit from its variable", () => {
    const env = {
      MATOOLKIT_MAX_MEMBER_UPLOAD_BYTES: "52428800",
      MATOOLKIT_MAX_MEMBER_ROWS: "300000",
      MATOOLKIT_HEAVY_REQUESTS_PER_CALLER: "1",
      MATOOLKIT_HEAVY_REQUESTS_TOTAL: " 8 ",
    };
    expect(adminApiConfigFromEnv(env).requestLimits).toEqual({
      memberUploadBytes: 52_428_800,
      memberRows: 300_000,
      heavyPerCaller: 1,
      heavyTotal: 8,
    });
  });

  it("refuses a value that is not a positive whole number, naming the variable", () => {
    expect(() => adminApiConfigFromEnv({ MATOOLKIT_MAX_MEMBER_ROWS: "0" })).toThrow(
      /MATOOLKIT_MAX_MEMBER_ROWS/,
    );
    expect(() => adminApiConfigFromEnv({ MATOOLKIT_MAX_MEMBER_UPLOAD_BYTES: "20mb" })).toThrow(
      /MATOOLKIT_MAX_MEMBER_UPLOAD_BYTES/,
    );
  });
});
