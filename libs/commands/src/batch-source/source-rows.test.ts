import type { DataSourceConfig } from "@matoolkit/domain";
import { describe, expect, it } from "vitest";
import { SourceRowError, toSourceRows } from "./source-rows.ts";

const scheduled: DataSourceConfig = {
  type: "postgres",
  query: "SELECT 1",
  primaryKey: "UserPrincipalName",
  batchTimeColumn: "MigrationDate",
  multiValuedColumns: [{ name: "ProxyAddresses", format: "semicolon_delimited" }],
};
const immediate: DataSourceConfig = { ...scheduled, batchTimeColumn: undefined, batchTime: "immediate" };
const email = "adele.vance@contoso.test";

function failure(rows: Record<string, unknown>[], source = scheduled): SourceRowError {
  try {
    toSourceRows(rows, source);
  } catch (error) {
    expect(error).toBeInstanceOf(SourceRowError);
    return error as SourceRowError;
  }
  throw new Error("expected toSourceRows to fail");
}

describe("toSourceRows", () => {
  it("keys rows by the primary key, reads the batch time and serialises multi-valued columns", () => {
    const rows = toSourceRows(
      [
        { UserPrincipalName: email, MigrationDate: "2030-06-10T09:00:00Z", ProxyAddresses: "smtp:a; smtp:b" },
        { UserPrincipalName: 42, MigrationDate: new Date("2030-06-11T09:00:00Z"), ProxyAddresses: null },
      ],
      scheduled,
    );
    expect(rows).toEqual([
      {
        memberKey: email,
        batchStart: new Date("2030-06-10T09:00:00Z"),
        data: {
          UserPrincipalName: email,
          MigrationDate: "2030-06-10T09:00:00Z",
          ProxyAddresses: ["smtp:a", "smtp:b"],
        },
      },
      {
        memberKey: "42",
        batchStart: new Date("2030-06-11T09:00:00Z"),
        data: { UserPrincipalName: 42, MigrationDate: "2030-06-11T09:00:00.000Z", ProxyAddresses: [] },
      },
    ]);
  });

  it("leaves the start time to the tick in immediate mode", () => {
    expect(toSourceRows([{ UserPrincipalName: email }], immediate)[0]?.batchStart).toBeNull();
  });

  it("names the row and column of an unreadable batch time, never the value", () => {
    const error = failure([
      { UserPrincipalName: "a@contoso.test", MigrationDate: "2030-06-10" },
      { UserPrincipalName: email, MigrationDate: `soon, ask ${email}` },
    ]);
    expect(error.reason).toBe("member_data.invalid");
    expect(error.message).toBe('row 2: batch_time_column "MigrationDate" is not an ISO 8601 date/time');
  });

  it("refuses a row without a batch time", () => {
    expect(failure([{ UserPrincipalName: email, MigrationDate: null }]).message).toContain(
      'row 1: batch_time_column "MigrationDate" is empty or missing',
    );
  });

  it("refuses an empty primary key and a repeated one, by row number", () => {
    expect(failure([{ UserPrincipalName: " ", MigrationDate: "2030-06-10" }]).message).toBe(
      'row 1: primary key column "UserPrincipalName" is empty or missing',
    );
    const duplicate = failure(
      [{ UserPrincipalName: email }, { UserPrincipalName: "b@contoso.test" }, { UserPrincipalName: email }],
      immediate,
    );
    expect(duplicate.message).toBe(
      'rows 1 and 3 have the same value in primary key column "UserPrincipalName"',
    );
    expect(duplicate.message).not.toContain(email);
  });

  it("reports a malformed multi-valued cell with its row", () => {
    const source: DataSourceConfig = {
      ...immediate,
      multiValuedColumns: [{ name: "Licenses", format: "json_array" }],
    };
    const error = failure([{ UserPrincipalName: email, Licenses: `{"owner": "${email}"}` }], source);
    expect(error.message).toMatch(/^row 1: column "Licenses" is not valid json_array/);
    expect(error.message).not.toContain(email);
  });

  it("names the row and column of a NUL or a lone surrogate, never the value (PostgreSQL cannot store them)", () => {
    const good = { UserPrincipalName: email, MigrationDate: "2030-06-10T09:00:00Z" };
    expect(failure([good, { ...good, UserPrincipalName: "b@x", Title: "sec\u0000ret" }]).message).toBe(
      'row 2: column "Title" contains a NUL character or an unpaired surrogate, which cannot be stored',
    );
    expect(failure([{ ...good, Notes: { nested: ["sec\ud800ret"] } }]).message).toBe(
      'row 1: column "Notes" contains a NUL character or an unpaired surrogate, which cannot be stored',
    );
    expect(failure([{ ...good, "a\u0000b": "x" }]).message).toBe(
      "row 1: a column name contains a NUL character or an unpaired surrogate",
    );
  });

  it("refuses a primary key longer than 512 characters (PostgreSQL cannot index it)", () => {
    const row = { UserPrincipalName: "x".repeat(513), MigrationDate: "2030-06-10T09:00:00Z" };
    expect(failure([row]).message).toBe(
      'row 1: primary key column "UserPrincipalName" is longer than 512 characters',
    );
  });
});
