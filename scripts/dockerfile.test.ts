import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The image installs dependencies from the workspace manifests before copying the sources (for
 * layer caching); a workspace missing there makes `npm ci` reject the lockfile in the image build,
 * which cannot run here (no Docker engine), so this test catches it.
 */
const root = resolve(import.meta.dirname, "..");

describe("Dockerfile", () => {
  it("copies the package.json of every workspace before npm ci", () => {
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    const workspaces = ["libs", "services"].flatMap((folder) =>
      readdirSync(join(root, folder)).map((name) => `${folder}/${name}`),
    );
    const missing = workspaces.filter(
      (workspace) => !dockerfile.includes(`COPY ${workspace}/package.json ${workspace}/`),
    );
    expect(missing).toEqual([]);
    expect(dockerfile.indexOf("npm ci")).toBeGreaterThan(dockerfile.lastIndexOf("/package.json"));
  });
});
