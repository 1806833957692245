import { mkdtemp, mkdir, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DataSourceConfig } from "@matoolkit/domain";
import { createDataSourceClient, DataSourceError } from "../index.ts";
import { failureOf } from "../../test/failure-of.ts";

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

  it("refuses a header that repeats a column name, naming it and both positions", async () => {
    await writeFile(join(baseDir, "data", "twice.csv"), "upn,groups,upn\na@contoso.com,g1,b@contoso.com\n");
    const error = await failureOf(client().query(source("data/twice.csv")));
    expect(error.message).toBe(
      'csv source: the header of data/twice.csv repeats column "upn" (fields 1 and 3)',
    );
  });
});

describe("csv data source confinement (MATOOLKIT_CSV_DIR)", () => {
  let outside: string;
  beforeAll(async () => {
    outside = await mkdtemp(join(tmpdir(), "matoolkit-outside-"));
    await writeFile(join(outside, "secret.csv"), "name\nserver-secret\n");
  });
  afterAll(async () => {
    await rm(outside, { recursive: true, force: true });
  });
  const client = () => createDataSourceClient({ env: {}, baseDir: join(baseDir, "data") });

  it.each([
    ["/etc/passwd", "must be relative to the CSV directory (MATOOLKIT_CSV_DIR), not absolute"],
    ["../data/members.csv", 'must not contain ".." (it must stay inside the CSV directory)'],
    ["sub/../../x.csv", 'must not contain ".." (it must stay inside the CSV directory)'],
  ])("refuses %s before opening anything", async (path, problem) => {
    const error = await failureOf(client().query(source(path)));
    expect(error).toBeInstanceOf(DataSourceError);
    expect(error.message).toBe(`csv source: csv path ${path} ${problem}`);
  });

  it("refuses a symlink that leads outside, also one swapped in after a successful read", async () => {
    const link = join(baseDir, "data", "swapped.csv");
    await symlink(join(baseDir, "data", "members.csv"), link);
    expect(await client().query(source("swapped.csv"))).toHaveLength(3);
    await unlink(link);
    await symlink(join(outside, "secret.csv"), link);
    const error = await failureOf(client().query(source("swapped.csv")));
    expect(error.message).toBe(
      "csv source: csv path swapped.csv leads outside the CSV directory (MATOOLKIT_CSV_DIR) through a symbolic link",
    );
    expect(error.message).not.toContain(outside);
  });

  it("refuses a directory symlink that leads outside", async () => {
    await symlink(outside, join(baseDir, "data", "elsewhere"));
    await expect(client().query(source("elsewhere/secret.csv"))).rejects.toThrow(/through a symbolic link/);
  });

  it("refuses every csv source when no directory is configured", async () => {
    const error = await failureOf(createDataSourceClient({ env: {} }).query(source("members.csv")));
    expect(error.message).toBe(
      "csv source: csv sources are not enabled on this server (MATOOLKIT_CSV_DIR is not set)",
    );
  });

  it("reports the same refusals as access problems for the publish-time check", async () => {
    await symlink(join(outside, "not-yet.csv"), join(baseDir, "data", "dangling.csv"));
    const problems = async (path: string) => client().accessProblems(source(path));
    expect(await problems("members.csv")).toEqual([]);
    expect(await problems("later/dropped-in-later.csv")).toEqual([]);
    expect(await problems("/etc/passwd")).toEqual([
      {
        field: "path",
        message: "csv path must be relative to the CSV directory (MATOOLKIT_CSV_DIR), not absolute",
      },
    ]);
    expect(await problems("elsewhere/secret.csv")).toEqual([
      {
        field: "path",
        message: "csv path leads outside the CSV directory (MATOOLKIT_CSV_DIR) through a symbolic link",
      },
    ]);
    // A link to a file that does not exist yet still points outside.
    expect(await problems("dangling.csv")).toHaveLength(1);
  });

  it("judges a CSV directory not created yet by its real path (reached through a symlink), as the read will", async () => {
    // The scheduler may read on another host: at publish the directory itself may not exist here.
    const linkedParent = join(outside, "linked-parent");
    await symlink(baseDir, linkedParent);
    const notYet = createDataSourceClient({ env: {}, baseDir: join(linkedParent, "not-yet") });
    expect(await notYet.accessProblems(source("members.csv"))).toEqual([]);
    // Once it exists, a symlink in it that points out is refused at publish and at read.
    await mkdir(join(baseDir, "not-yet"));
    await symlink(join(outside, "secret.csv"), join(baseDir, "not-yet", "secret.csv"));
    expect(await notYet.accessProblems(source("secret.csv"))).toEqual([
      {
        field: "path",
        message: "csv path leads outside the CSV directory (MATOOLKIT_CSV_DIR) through a symbolic link",
      },
    ]);
    await expect(notYet.query(source("secret.csv"))).rejects.toThrow(/through a symbolic link/u);
  });

  it("refuses a loop of symlinks at publish without naming the server's directories", async () => {
    await symlink(join(baseDir, "data", "loop-b"), join(baseDir, "data", "loop-a"));
    await symlink(join(baseDir, "data", "loop-a"), join(baseDir, "data", "loop-b"));
    const problems = await client().accessProblems(source("loop-a/x.csv"));
    expect(problems).toEqual([
      { field: "path", message: "csv path cannot be resolved (a loop of symbolic links)" },
    ]);
    expect(JSON.stringify(problems)).not.toContain(baseDir);
  });

  it("reads a file whose name begins with two dots, which is a name and not a climb", async () => {
    await writeFile(join(baseDir, "data", "..members.csv"), "upn\nd@contoso.com\n");
    const { batchTimeColumn: _none, ...withoutTime } = source("..members.csv");
    expect(await client().query(withoutTime)).toEqual([{ upn: "d@contoso.com" }]);
    expect(await client().accessProblems(source("..members.csv"))).toEqual([]);
  });
});
