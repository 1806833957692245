import { describe, expect, it } from "vitest";
import { parseBatchTime, roundToFiveMinutes } from "./batch-time.ts";

describe("parseBatchTime", () => {
  it.each([
    ["2030-06-10T09:00:00Z", "2030-06-10T09:00:00.000Z"],
    ["2030-06-10T09:00:00.123456Z", "2030-06-10T09:00:00.123Z"],
    ["2030-06-10T11:00:00+02:00", "2030-06-10T09:00:00.000Z"],
    ["2030-06-10T04:30:00-0430", "2030-06-10T09:00:00.000Z"],
    // SQL Server / Databricks text without a zone: UTC, whatever the host's time zone.
    ["2030-06-10 09:00:00", "2030-06-10T09:00:00.000Z"],
    ["2030-06-10T09:00", "2030-06-10T09:00:00.000Z"],
    ["2030-06-10", "2030-06-10T00:00:00.000Z"],
    ["  2030-06-10T09:00:00Z  ", "2030-06-10T09:00:00.000Z"],
  ])("reads %s as %s", (text, iso) => {
    expect(parseBatchTime(text)?.toISOString()).toBe(iso);
  });

  it("takes a driver's Date as it is", () => {
    const instant = new Date("2030-06-10T09:00:00Z");
    expect(parseBatchTime(instant)).toBe(instant);
  });

  it.each([
    ["a non-date text", "next tuesday"],
    ["a day that does not exist", "2030-02-30"],
    ["a day that does not exist, with a zone", "2030-02-30T10:00:00+02:00"],
    ["an hour that does not exist", "2030-06-10T24:30:00Z"],
    ["a month that does not exist", "2030-13-01T00:00:00Z"],
    ["a number (epoch or Excel serial: ambiguous)", 1_900_000_000],
    ["an invalid Date", new Date("nope")],
    ["null", null],
  ])("refuses %s", (_what, value) => {
    expect(parseBatchTime(value)).toBeUndefined();
  });
});

describe("roundToFiveMinutes", () => {
  it.each([
    ["2030-06-01T12:02:29Z", "2030-06-01T12:00:00.000Z"],
    ["2030-06-01T12:02:30Z", "2030-06-01T12:05:00.000Z"],
    ["2030-06-01T12:57:31Z", "2030-06-01T13:00:00.000Z"],
    ["2030-06-01T12:05:00Z", "2030-06-01T12:05:00.000Z"],
  ])("rounds %s to the nearest 5 minutes: %s", (input, expected) => {
    expect(roundToFiveMinutes(new Date(input)).toISOString()).toBe(expected);
  });
});
