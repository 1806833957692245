import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMemberData, type DataSourceConfig } from "@matoolkit/domain";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { createMemberDataWriter } from "./member-data-json.ts";
import { SourceRowError } from "./source-row-error.ts";

/**
 * The tick writes members' data_json as JSON text (never as objects): it must hold exactly what
 * serializeMemberData makes of the row, and, for the values sources usually return, read exactly
 * as PostgreSQL renders the stored jsonb, which is how an unchanged member is recognised.
 */
const multiValued: DataSourceConfig["multiValuedColumns"] = [
  { name: "ProxyAddresses", format: "semicolon_delimited" },
  { name: "Groups", format: "comma_delimited" },
  { name: "Licenses", format: "json_array" },
];

const rows: Record<string, unknown>[] = [
  {
    UserPrincipalName: "adele.vance@contoso.test",
    DisplayName: 'Adele "AV" Vance\\ \n\t\u0001 ünïcödé 😀',
    MigrationDate: new Date("2030-06-10T09:00:00Z"),
    ProxyAddresses: " smtp:a@contoso.test ;; SMTP:b@contoso.test; ",
    Groups: "g1, g2,,g3",
    Licenses: '["E3", "EMS"]',
    Age: 42,
    Ratio: 0.1 + 0.2,
    Negative: -0,
    Missing: null,
    Absent: undefined,
    Enabled: true,
    Big: 12345678901234567890n,
    NaN: Number.NaN,
    é: "accented key",
    bb: "sorts before the longer keys",
  },
  {
    UserPrincipalName: "x@contoso.test",
    ProxyAddresses: null,
    Groups: ["a", 1, true],
    Licenses: "",
    Nested: { b: [1, { c: new Date("2031-01-01T00:00:00Z") }], a: null },
    List: ["x", 2],
    Huge: 1e21,
    Tiny: 1e-7,
    Bytes: Buffer.from("hi"),
  },
  { ["__proto__"]: "a column named like the prototype", constructor: 1, "": "empty name" },
];

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

describe("member data as JSON text", () => {
  it("holds what serializeMemberData makes of the row", () => {
    const write = createMemberDataWriter(multiValued);
    for (const [index, row] of rows.entries()) {
      const json = write.write(row, index + 1);
      expect(write.conversionError).toBeUndefined();
      expect(json).not.toContain("\n");
      expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(serializeMemberData(row, multiValued))));
    }
  });

  it("reads as PostgreSQL renders the stored jsonb, for strings, lists, numbers, booleans and nulls", async () => {
    const write = createMemberDataWriter(multiValued);
    for (const row of [rows[0], rows[2], {}] as Record<string, unknown>[]) {
      const json = write.write(row, 1);
      const rendered = await sql<{ text: string }>`SELECT ${json}::text::jsonb::text AS text`.execute(
        database.db,
      );
      expect(rendered.rows[0]?.text).toBe(json);
    }
  });

  it("stores any value, whatever PostgreSQL's rendering of it", async () => {
    const write = createMemberDataWriter(multiValued);
    const json = write.write(rows[1] as Record<string, unknown>, 1);
    const stored = await sql<{ data: unknown }>`SELECT ${json}::text::jsonb AS data`.execute(database.db);
    expect(stored.rows[0]?.data).toEqual(JSON.parse(json));
  });

  it("leaves a malformed multi-valued cell to the caller, and refuses text PostgreSQL cannot store", () => {
    const write = createMemberDataWriter(multiValued);
    write.write({ Licenses: "{not a list" }, 7);
    expect(write.conversionError).toBeInstanceOf(SourceRowError);
    expect((write.conversionError as Error).message).toMatch(
      /^row 7: column "Licenses" is not valid json_array/,
    );
    // The next row starts clean.
    write.write({ Licenses: "[]" }, 8);
    expect(write.conversionError).toBeUndefined();

    expect(() => write.write({ Title: "a\u0000b" }, 3)).toThrow(
      'row 3: column "Title" contains a NUL character or an unpaired surrogate, which cannot be stored',
    );
    // A json_array cell's escape decodes to a NUL: refused by name too, not by a driver error.
    write.write({ Licenses: '["a\\u0000"]' }, 4);
    expect((write.conversionError as Error).message).toBe(
      'row 4: column "Licenses" contains a NUL character or an unpaired surrogate, which cannot be stored',
    );
  });
});
