import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, posix, relative, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBundle, repoRoot, workspaceDirs, type BuildResult } from "./build.ts";

/**
 * Production code apart from test code: each package's src/ is what ships, so nothing in it may
 * reach test support (a test runner, a browser driver, containers, @matoolkit/testing, or a file
 * under a test/ folder), and the production bundle must be made of none of it. Co-located
 * `*.test.ts(x)` files are tests themselves: they may import anything. libs/testing is test
 * support as a whole and is not scanned.
 */

const testPackagePatterns = [
  /^vitest(\/|$)/,
  /^@vitest\//,
  /^playwright(-core)?(\/|$)/,
  /^@playwright\//,
  /^testcontainers(\/|$)/,
  /^@testcontainers\//,
];
const testWorkspaces = new Set(["@matoolkit/testing"]);

interface Workspace {
  readonly name: string;
  /** Relative to the repository, with forward slashes. */
  readonly dir: string;
  readonly exports: Readonly<Record<string, string>>;
}

function workspaces(): Workspace[] {
  return workspaceDirs().map((dir) => {
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      name: string;
      exports?: Record<string, string>;
    };
    return { name: manifest.name, dir: toPosix(relative(repoRoot, dir)), exports: manifest.exports ?? {} };
  });
}

function toPosix(path: string): string {
  return path.split(sep).join("/");
}

const isTestFile = (path: string) => /\.test\.tsx?$/.test(path);
const underTestFolder = (path: string) => /(^|\/)test\//.test(path);

/** Module specifiers of a source's static and dynamic imports and re-exports. */
function importSpecifiers(source: string): string[] {
  const found = new Set<string>();
  const patterns = [
    /\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns)
    for (const [, specifier] of source.matchAll(pattern)) found.add(specifier ?? "");
  return [...found];
}

/** Why importing `specifier` from production file `file` reaches test code, or undefined. */
function testCodeReachedBy(
  file: string,
  specifier: string,
  workspaceList: readonly Workspace[],
): string | undefined {
  if (testPackagePatterns.some((pattern) => pattern.test(specifier))) return "a test-only package";
  if (specifier.startsWith(".")) {
    const target = posix.normalize(posix.join(posix.dirname(file), specifier));
    if (underTestFolder(target)) return "a file under a test/ folder";
    if (isTestFile(target)) return "a test file";
    return undefined;
  }
  const workspace = workspaceList.find((w) => specifier === w.name || specifier.startsWith(`${w.name}/`));
  if (workspace === undefined) return undefined;
  if (testWorkspaces.has(workspace.name)) return "the test support package";
  const subpath = specifier === workspace.name ? "." : `.${specifier.slice(workspace.name.length)}`;
  const target = workspace.exports[subpath];
  if (target !== undefined && underTestFolder(posix.normalize(target))) {
    return `a file under a test/ folder (${workspace.dir}/${posix.normalize(target)})`;
  }
  return undefined;
}

/** "file imports specifier (reason)" for each production import of test code. */
function testCodeImports(
  files: ReadonlyArray<{ readonly path: string; readonly source: string }>,
  workspaceList: readonly Workspace[],
): string[] {
  return files.flatMap(({ path, source }) =>
    importSpecifiers(source).flatMap((specifier) => {
      const reason = testCodeReachedBy(path, specifier, workspaceList);
      return reason === undefined ? [] : [`${path} imports "${specifier}" (${reason})`];
    }),
  );
}

/** The bundle inputs (relative to the repository) that are test code, with the reason. */
function testCodeInputs(inputs: readonly string[]): string[] {
  return inputs.flatMap((input) => {
    if (input.startsWith("libs/testing/")) return [`${input} (the test support package)`];
    if (!input.includes("node_modules/") && underTestFolder(input))
      return [`${input} (under a test/ folder)`];
    if (isTestFile(input)) return [`${input} (a test file)`];
    const inPackage = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1];
    if (inPackage !== undefined && testPackagePatterns.some((pattern) => pattern.test(inPackage))) {
      return [`${input} (a test-only package)`];
    }
    return [];
  });
}

/** Every source file of every workspace's src/ that ships (not a co-located test), but libs/testing. */
function productionSources(workspaceList: readonly Workspace[]): Array<{ path: string; source: string }> {
  const files: Array<{ path: string; source: string }> = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && entry.name !== "dist") walk(path);
      } else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry.name) && !isTestFile(path)) {
        files.push({ path, source: readFileSync(join(repoRoot, path), "utf8") });
      }
    }
  };
  for (const workspace of workspaceList) {
    if (testWorkspaces.has(workspace.name)) continue;
    if (existsSync(join(repoRoot, workspace.dir, "src"))) walk(`${workspace.dir}/src`);
  }
  return files;
}

describe("production src/ folders import no test code", () => {
  const workspaceList = workspaces();

  it("finds a planted import of each kind, naming the file and the import", () => {
    const planted = [
      { path: "services/orchestrator/src/main.ts", source: 'import { it } from "vitest";' },
      { path: "services/dashboard/src/app.tsx", source: 'import { chromium } from "playwright-core";' },
      {
        path: "libs/db/src/index.ts",
        source: 'export { PostgreSqlContainer } from "@testcontainers/postgresql";',
      },
      { path: "libs/db/src/open.ts", source: 'const t = await import("@matoolkit/testing");' },
      {
        path: "services/scheduler/src/tick/x.ts",
        source: 'import { harness } from "../../test/test-support.ts";',
      },
      { path: "libs/runtime/src/index.ts", source: 'export * from "./x.test.ts";' },
      {
        path: "services/admin-api/src/app.ts",
        source: 'import { inMemoryTracing } from "@matoolkit/runtime/testing";',
      },
    ];
    const problems = testCodeImports(planted, workspaceList);
    expect(problems).toEqual([
      'services/orchestrator/src/main.ts imports "vitest" (a test-only package)',
      'services/dashboard/src/app.tsx imports "playwright-core" (a test-only package)',
      'libs/db/src/index.ts imports "@testcontainers/postgresql" (a test-only package)',
      'libs/db/src/open.ts imports "@matoolkit/testing" (the test support package)',
      'services/scheduler/src/tick/x.ts imports "../../test/test-support.ts" (a file under a test/ folder)',
      'libs/runtime/src/index.ts imports "./x.test.ts" (a test file)',
      'services/admin-api/src/app.ts imports "@matoolkit/runtime/testing" ' +
        "(a file under a test/ folder (libs/runtime/test/testing.ts))",
    ]);
  });

  it("lets production code import production code, including functions named test-*", () => {
    const fine = [
      {
        path: "services/worker/src/functions/entra/index.ts",
        source:
          'import { testEntraAttributeMatch } from "./test-entra-attribute-match.ts";\n' +
          'import { z } from "zod";\nimport { parseRunbook } from "@matoolkit/domain";',
      },
    ];
    expect(testCodeImports(fine, workspaceList)).toEqual([]);
  });

  it("holds for every file of every libs/*/src and services/*/src but co-located tests", () => {
    const sources = productionSources(workspaceList);
    expect(sources.length).toBeGreaterThan(300);
    const problems = testCodeImports(sources, workspaceList);
    expect(problems, `production src/ imports test code:\n${problems.join("\n")}`).toEqual([]);
  });
});

describe("the production bundle is made of no test code", { timeout: 120_000 }, () => {
  // Inside the repository (node_modules/.cache), as build.test.ts does: externals resolve from there.
  // Made in beforeAll, not at collection, so `vitest list` leaves no folder behind.
  let outdir: string | undefined;
  let built: BuildResult;
  beforeAll(async () => {
    const cacheDir = join(repoRoot, "node_modules", ".cache");
    mkdirSync(cacheDir, { recursive: true });
    outdir = mkdtempSync(join(cacheDir, "matoolkit-no-test-code-"));
    built = await buildBundle(outdir);
  });
  afterAll(() => {
    if (outdir !== undefined) rmSync(outdir, { recursive: true, force: true });
  });

  it("names each kind of test input it would refuse", () => {
    expect(
      testCodeInputs([
        "services/orchestrator/test/test-harness.ts",
        "libs/testing/src/index.ts",
        "services/worker/src/execute-job.test.ts",
        "node_modules/vitest/dist/index.js",
        "node_modules/@testcontainers/postgresql/build/index.js",
        "services/worker/src/functions/entra/test-entra-attribute-match.ts",
        "node_modules/some-lib/test/helper.js",
      ]),
    ).toEqual([
      "services/orchestrator/test/test-harness.ts (under a test/ folder)",
      "libs/testing/src/index.ts (the test support package)",
      "services/worker/src/execute-job.test.ts (a test file)",
      "node_modules/vitest/dist/index.js (a test-only package)",
      "node_modules/@testcontainers/postgresql/build/index.js (a test-only package)",
    ]);
  });

  it("has no input from a test/ folder, libs/testing or a *.test.ts file", () => {
    expect(built.inputs).toContain("scripts/build/matoolkit-entry.ts");
    expect(built.inputs).toContain("services/admin-api/src/main.ts");
    expect(built.inputs).toContain("libs/auth/src/index.ts");
    const problems = testCodeInputs(built.inputs);
    expect(problems, `the bundle is made of test code:\n${problems.join("\n")}`).toEqual([]);
  });

  it("imports no test-only package at run time", () => {
    const testExternals = built.externals.filter((name) => testPackagePatterns.some((p) => p.test(name)));
    expect(testExternals, `the bundle imports test-only packages: ${testExternals.join(", ")}`).toEqual([]);
  });
});
