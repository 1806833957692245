import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { csvDirFromEnv } from "./csv-dir.ts";

/**
 * Issue 25, finding 6: MATOOLKIT_CSV_DIR may not be or contain the data directory (its signing key,
 * the embedded database and its password file would be one runbook away from the query preview).
 * The check compared path text: a data directory named `..data`, or one reached through a
 * symlink, passed.
 */
const base = realpathSync(mkdtempSync(join(tmpdir(), "matoolkit-csv-dir-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const csv = join(base, "csv");
mkdirSync(join(csv, "..data"), { recursive: true });
symlinkSync(csv, join(base, "csv-link"));
mkdirSync(join(base, "real"));
symlinkSync(join(base, "real"), join(base, "real-link"));

const refusal =
  "Invalid configuration: MATOOLKIT_CSV_DIR: must not be or contain the data directory (MATOOLKIT_DATA_DIR), " +
  "which holds the signing key and the embedded database";
const check = (csvDir: string, dataDir: string) => () =>
  csvDirFromEnv({ MATOOLKIT_CSV_DIR: csvDir }, dataDir);

describe("MATOOLKIT_CSV_DIR and the data directory", () => {
  it.each([
    ["a data directory named ..data inside it", csv, join(csv, "..data")],
    ["the same directory, spelt with a trailing slash", `${csv}/`, csv],
    ["a data directory reached through a symlink to it", csv, join(base, "csv-link", ".matoolkit")],
    [
      "a CSV directory given as a symlink to a parent of the data directory",
      join(base, "real-link"),
      join(base, "real", "data"),
    ],
    ["a data directory that does not exist yet, below it", csv, join(csv, "later", "data")],
    [
      "a data directory spelt with .. segments that land inside it",
      csv,
      join(base, "other", "..", "csv", "data"),
    ],
  ])("refuses %s", (_what, csvDir, dataDir) => {
    expect(check(csvDir, dataDir)).toThrow(refusal);
  });

  it.each([
    ["a sibling whose name starts with the CSV directory's", csv, join(base, "csv-data")],
    ["a data directory that holds the CSV directory", join(base, "real", "csv"), join(base, "real")],
    ["a data directory elsewhere", csv, join(base, "data")],
  ])("accepts %s", (_what, csvDir, dataDir) => {
    expect(check(csvDir, dataDir)()).toBe(csvDir);
  });

  it("turns csv sources off with none", () => {
    expect(csvDirFromEnv({ MATOOLKIT_CSV_DIR: "none" }, csv)).toBeUndefined();
  });
});
