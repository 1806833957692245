import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isReallyWithin, isWithin, realPathAsFarAsItExists } from "./path-containment.ts";

// A real directory tree: root/{inside/, file.csv}, root/..data/, a sibling outside/ and links.
const base = realpathSync(mkdtempSync(join(tmpdir(), "matoolkit-containment-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const root = join(base, "root");
mkdirSync(join(root, "inside"), { recursive: true });
mkdirSync(join(root, "..data"));
mkdirSync(join(base, "outside"));
mkdirSync(join(base, "root-old"));
writeFileSync(join(root, "file.csv"), "a\n");
writeFileSync(join(base, "outside", "key"), "secret");
symlinkSync(join(base, "outside"), join(root, "out-link"));
symlinkSync(join(root, "inside"), join(base, "in-link"));
symlinkSync("inside", join(root, "inner-link"));
symlinkSync(join(base, "outside", "not-yet"), join(root, "dangling-out"));
symlinkSync(root, join(base, "root-link"));

describe("isWithin (by path segments)", () => {
  it.each([
    ["a sibling whose name starts with the root's", join(base, "root-old"), false],
    ["a child named ..data", join(root, "..data"), true],
    ["a climb out with .. segments", join(root, "inside", "..", "..", "outside"), false],
    ["a climb that stays inside", join(root, "inside", "..", "file.csv"), true],
    ["the parent", base, false],
    ["a file that does not exist yet", join(root, "inside", "later.csv"), true],
  ])("%s", (_what, candidate, inside) => {
    expect(isWithin(root, candidate)).toBe(inside);
  });

  it("ignores trailing and doubled separators, and counts the root itself only when asked", () => {
    expect(isWithin(`${root}/`, `${root}//inside/`)).toBe(true);
    expect(isWithin(`${root}/`, root)).toBe(false);
    expect(isWithin(`${root}/`, `${root}/.`, { orSame: true })).toBe(true);
  });

  it("sees a root of ..data below a directory as inside it (the data dir case)", () => {
    // MATOOLKIT_CSV_DIR=root, MATOOLKIT_DATA_DIR=root/..data: the data dir IS inside.
    expect(isWithin(root, join(root, "..data"), { orSame: true })).toBe(true);
  });
});

describe("isReallyWithin (by real paths)", () => {
  it("refuses a symlink inside the root that points out, also to a file not there yet", () => {
    expect(isWithin(root, join(root, "out-link", "key"))).toBe(true); // the text says inside...
    expect(isReallyWithin(root, join(root, "out-link", "key"))).toBe(false); // ...it is not
    expect(isReallyWithin(root, join(root, "dangling-out"))).toBe(false);
    expect(isReallyWithin(root, join(root, "out-link", "later", "x.csv"))).toBe(false);
  });

  it("accepts a symlink that leads back inside, from inside or from outside", () => {
    expect(isReallyWithin(root, join(root, "inner-link", "x.csv"))).toBe(true);
    expect(isReallyWithin(root, join(base, "in-link"))).toBe(true);
    expect(isWithin(root, join(base, "in-link"))).toBe(false);
  });

  it("resolves a root reached through a symlink", () => {
    expect(isReallyWithin(join(base, "root-link"), join(root, "file.csv"))).toBe(true);
    expect(isReallyWithin(root, join(base, "root-link", "inside"))).toBe(true);
    expect(isReallyWithin(join(base, "root-link"), root, { orSame: true })).toBe(true);
    expect(isReallyWithin(join(base, "root-link"), join(base, "outside"))).toBe(false);
  });

  it("gives the real path of a path that does not exist yet", () => {
    expect(realPathAsFarAsItExists(join(base, "root-link", "new", "deeper"))).toBe(
      join(root, "new", "deeper"),
    );
    expect(realPathAsFarAsItExists(join(root, "dangling-out", "x"))).toBe(
      join(base, "outside", "not-yet", "x"),
    );
  });

  it("stops on a symlink loop with an error instead of spinning", () => {
    symlinkSync(join(base, "loop-b"), join(base, "loop-a"));
    symlinkSync(join(base, "loop-a"), join(base, "loop-b"));
    expect(() => realPathAsFarAsItExists(join(base, "loop-a", "x"))).toThrow(
      /too many levels of symbolic links/u,
    );
  });
});
