import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DataSourceConfig } from "@matoolkit/domain";
import { createDataSourceClient, DataSourceError } from "../index.ts";
import { failureOf } from "../failure-of.ts";

let baseDir: string;

const source = (path: string): DataSourceConfig => ({
  type: "csv",
  path,
  primaryKey: "upn",
  batchTimeColumn: "migration_at",
  multiValuedColumns: [{ name: "groups", format: "semicolon_delimited" }],
});

beforeAll(async () => {
  baseDir = await mkdtemp(join(tmpdir(), "matoolkit-csv-"));
  await mkdir(join(baseDir, "data"));
  await writeFile(
    join(baseDir, "data", "members.csv"),
    "\uFEFF upn , migration_at ,groups\n" +
      "a@contoso.com, 2030-01-01T10:00:00Z ,g1;g2\n" +
      "\n" +
      '"b@contoso.com",2030-01-01T10:00:00Z,""\n' +
      "c@contoso.com,2030-02-01T10:00:00Z,g3\n",
  );
  await writeFile(
    join(baseDir, "data", "broken.csv"),
    "upn,migration_at\na@contoso.com,2030-01-01T10:00:00Z\nb@contoso.com,2030-01-01T10:00:00Z,secret-extra\n",
  );
});

afterAll(async () => {
  await rm(baseDir, { recursive: true, force: true });
});

describe("csv data source", () => {
  const client = () => createDataSourceClient({ env: {}, baseDir });

  it("reads every row by header name, trimmed, without the BOM or blank lines", async () => {
    expect(await client().query(source("data/members.csv"))).toEqual([
      { upn: "a@contoso.com", migration_at: "2030-01-01T10:00:00Z", groups: "g1;g2" },
      { upn: "b@contoso.com", migration_at: "2030-01-01T10:00:00Z", groups: "" },
      { upn: "c@contoso.com", migration_at: "2030-02-01T10:00:00Z", groups: "g3" },
    ]);
  });

  it("resolves a relative path against the base directory and honours limit", async () => {
    const fromData = createDataSourceClient({ env: {}, baseDir: join(baseDir, "data") });
    expect(await fromData.query(source("./members.csv"), { limit: 2 })).toEqual([
      { upn: "a@contoso.com", migration_at: "2030-01-01T10:00:00Z", groups: "g1;g2" },
      { upn: "b@contoso.com", migration_at: "2030-01-01T10:00:00Z", groups: "" },
    ]);
  });

  it("names the line of a malformed record, not its values", async () => {
    const error = await failureOf(client().query(source("data/broken.csv")));
    expect(error).toBeInstanceOf(DataSourceError);
    expect(error.message).toBe(
      "csv source: a row has a different number of fields than the header in data/broken.csv at line 3 (CSV_RECORD_INCONSISTENT_COLUMNS)",
    );
    expect(error.message).not.toContain("secret-extra");
  });

  it("names the line where a quoted field never closes", async () => {
    await writeFile(
      join(baseDir, "data", "unclosed.csv"),
      'upn,groups\na@contoso.com,g1\nb@contoso.com,"g2\n',
    );
    await expect(client().query(source("data/unclosed.csv"))).rejects.toThrow(
      /csv source: a quoted field is not closed in data\/unclosed.csv at line \d+ \(CSV_QUOTE_NOT_CLOSED\)/,
    );
  });

  it("reports a missing file by its configured path", async () => {
    await expect(client().query(source("data/nope.csv"))).rejects.toThrow(
      "csv source: file not found: data/nope.csv",
    );
  });
});
