import { describe, expect, it } from "vitest";
import type { MultiValuedColumn } from "../runbook/model.ts";
import { MemberDataError } from "./errors.ts";
import { serializeMemberData } from "./serialize.ts";

const COLUMNS: MultiValuedColumn[] = [
  { name: "Groups", format: "semicolon_delimited" },
  { name: "Aliases", format: "comma_delimited" },
  { name: "Licenses", format: "json_array" },
];

describe("serializeMemberData", () => {
  it("splits delimited columns, trimming and dropping empty entries", () => {
    const data = serializeMemberData({ Groups: " Sales; EMEA;;  ", Aliases: "a@x.com, b@x.com ,," }, COLUMNS);
    expect(data).toEqual({ Groups: ["Sales", "EMEA"], Aliases: ["a@x.com", "b@x.com"] });
  });

  it("parses json_array columns into string lists", () => {
    const data = serializeMemberData({ Licenses: '["E5", "Teams", 3, true]' }, COLUMNS);
    expect(data).toEqual({ Licenses: ["E5", "Teams", "3", "true"] });
  });

  it("treats null or empty multi-valued cells as no values", () => {
    const data = serializeMemberData({ Groups: null, Aliases: "", Licenses: "" }, COLUMNS);
    expect(data).toEqual({ Groups: [], Aliases: [], Licenses: [] });
  });

  it("accepts sources that already return lists (e.g. PostgreSQL text[])", () => {
    expect(serializeMemberData({ Groups: ["Sales", 7] }, COLUMNS)).toEqual({ Groups: ["Sales", "7"] });
  });

  it("keeps a configured column the row lacks absent rather than failing", () => {
    const data = serializeMemberData({ Email: "a@contoso.com" }, COLUMNS);
    expect(data).toEqual({ Email: "a@contoso.com" });
    expect(Object.hasOwn(data, "Groups")).toBe(false);
  });

  it("makes other values JSON-safe: dates to ISO text, bigints to text, the rest unchanged", () => {
    const row = {
      Start: new Date("2025-03-15T10:30:00Z"),
      Id: 9007199254740993n,
      Count: 4,
      Active: true,
      Note: null,
      Extra: { When: new Date("2025-01-01T00:00:00Z"), Tags: ["x"] },
    };
    const data = serializeMemberData(row, []);
    expect(data).toEqual({
      Start: "2025-03-15T10:30:00.000Z",
      Id: "9007199254740993",
      Count: 4,
      Active: true,
      Note: null,
      Extra: { When: "2025-01-01T00:00:00.000Z", Tags: ["x"] },
    });
    expect(JSON.parse(JSON.stringify(data))).toEqual(data);
  });

  it.each([
    ["unparseable JSON", "[not json"],
    ["a JSON object", '{"a": "secret@contoso.com"}'],
    ["nested values", '[["secret@contoso.com"]]'],
  ])(
    "rejects a json_array cell holding %s, naming the column and format but not the value",
    (_what, cell) => {
      let caught: unknown;
      try {
        serializeMemberData({ Licenses: cell }, COLUMNS);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(MemberDataError);
      const error = caught as MemberDataError;
      expect(error).toMatchObject({
        column: "Licenses",
        format: "json_array",
        reason: "member_data.invalid",
      });
      expect(error.message).toContain('column "Licenses" is not valid json_array');
      expect(error.message).not.toContain("secret");
    },
  );
});
