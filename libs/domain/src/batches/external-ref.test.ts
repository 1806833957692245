import { describe, expect, it } from "vitest";
import { checkExternalRef, EXTERNAL_REF_MAX_LENGTH, externalRefFromRows } from "./external-ref.ts";

describe("checkExternalRef", () => {
  it("accepts a ticket id, trimmed", () => {
    expect(checkExternalRef("  CHG0012345 ")).toEqual({ ok: true, value: "CHG0012345" });
    expect(checkExternalRef("REQ-7 / wave 2 ✓")).toEqual({ ok: true, value: "REQ-7 / wave 2 ✓" });
  });

  it.each([
    ["", "must not be empty"],
    ["   ", "must not be empty"],
    ["x".repeat(EXTERNAL_REF_MAX_LENGTH + 1), `must be at most ${EXTERNAL_REF_MAX_LENGTH} characters`],
    ["CHG-1\nforged line", "must not contain control characters or unpaired surrogates"],
    ["CHG\u0000", "must not contain control characters or unpaired surrogates"],
    ["CHG\u009b", "must not contain control characters or unpaired surrogates"],
    ["CHG\ud800", "must not contain control characters or unpaired surrogates"],
  ])("refuses %j", (text, problem) => {
    expect(checkExternalRef(text)).toEqual({ ok: false, problem });
  });

  it("accepts exactly the maximum length", () => {
    expect(checkExternalRef("y".repeat(EXTERNAL_REF_MAX_LENGTH)).ok).toBe(true);
  });
});

describe("externalRefFromRows", () => {
  it("takes the first non-empty valid value, in row order", () => {
    const rows = [{ T: "" }, { T: null }, { T: "bad\tvalue" }, { T: " CHG-2 " }, { T: "CHG-3" }];
    expect(externalRefFromRows(rows, "T")).toBe("CHG-2");
  });

  it("reads numbers as text and answers null when no row has a value", () => {
    expect(externalRefFromRows([{ T: 4711 }], "T")).toBe("4711");
    expect(externalRefFromRows([{ Other: "x" }, { T: [] }], "T")).toBeNull();
  });
});
