import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import daprConfig from "../../vitest.dapr.config.ts";
import { daprSuiteFiles, profileFolders, profilesLoadedBy, readBrokerMatrix } from "./broker-matrix.ts";

/**
 * Issue 32, point 3: components/README.md's "What ran where" matrix says, per profile, whether the
 * shared end-to-end suite passes on real daprd and which test files show it. CI runs every file of
 * `npm run test:dapr`, so the matrix is held to those files: a claim without a test CI runs, or a
 * profile CI runs that the matrix does not claim, fails here.
 */
const root = resolve(import.meta.dirname, "..", "..");
const matrix = readBrokerMatrix(join(root, "components", "README.md"), root);
const ciFiles = daprSuiteFiles(root, daprConfig.test?.include ?? []);
const loaded = new Map(
  ciFiles.map((file) => [file, profilesLoadedBy(readFileSync(join(root, file), "utf8"))]),
);

describe("components/README.md's matrix matches what npm run test:dapr runs", () => {
  it("has one row per profile folder", () => {
    expect(matrix.map((row) => row.profile).sort()).toEqual(profileFolders(root));
  });

  it("links only test files that npm run test:dapr runs", () => {
    const notRun = matrix.flatMap((row) =>
      row.testFiles.filter((file) => !ciFiles.includes(file)).map((file) => `${row.profile}: ${file}`),
    );
    expect(notRun).toEqual([]);
  });

  it("claims the shared suite passes exactly for the profiles whose shared-suite file CI runs", () => {
    const running = [...loaded.entries()].filter(([, use]) => use.sharedSuite);
    const claimed = matrix.filter((row) => row.suite === "passes");
    expect(claimed.map((row) => row.profile).sort()).toEqual(
      [...new Set(running.flatMap(([, use]) => use.profiles))].sort(),
    );
    for (const row of claimed) {
      const files = running.filter(
        ([file, use]) => use.profiles.includes(row.profile) && row.testFiles.includes(file),
      );
      expect(files, `${row.profile} (README line ${row.line}) links its shared-suite file`).not.toEqual([]);
    }
  });

  it("links every CI file that loads a profile in that profile's row, and none for a profile only reviewed", () => {
    for (const row of matrix) {
      const loading = [...loaded.entries()]
        .filter(([, use]) => use.profiles.includes(row.profile))
        .map(([f]) => f);
      expect(row.testFiles, `${row.profile} (README line ${row.line})`).toEqual(
        expect.arrayContaining(loading),
      );
      if (row.suite === "reviewed only") expect(row.testFiles, row.profile).toEqual([]);
      else expect(row.testFiles, `${row.profile} (README line ${row.line}) names a test`).not.toEqual([]);
    }
  });
});
