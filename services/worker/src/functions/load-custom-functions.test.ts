import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reasonCodes, type WorkerJobMessage } from "@matoolkit/domain";
import { executeJob } from "../execute-job.ts";
import { createDiagnosticFunctions } from "./diagnostics.ts";
import { createRegistryWithCustomFunctions, loadCustomFunctions } from "./load-custom-functions.ts";

let root: string;
let count = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "matoolkit-custom-functions-"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A fresh directory with these files (fresh names: ESM caches modules by URL). */
async function dirWith(files: Record<string, string>): Promise<string> {
  const dir = join(root, `case-${++count}`);
  await mkdir(dir);
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  return dir;
}

async function failureOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected a failure");
}

const context = {
  jobId: "j",
  stepExecutionId: 1,
  isInitStep: false,
  batchId: 1,
  attempt: 1,
  signal: new AbortController().signal,
} as const;

describe("loadCustomFunctions", () => {
  it("loads .js, .mjs and .ts files in name order, named and default exports, ignoring the rest", async () => {
    const dir = await dirWith({
      "b-named.mjs": `const f = async () => "b"; export { f as "Set-Thing" };`,
      "a-default.js": `export default { "Get-Thing": async (params) => ({ complete: true, data: params }) };`,
      "c-typed.ts": `export default { "Test-Typed": async (p: Record<string, unknown>): Promise<number> => Object.keys(p).length };`,
      "helper.test.ts": `throw new Error("a test must not be loaded");`,
      "types.d.ts": `export declare const x: number;`,
      ".hidden.js": `throw new Error("a dotfile must not be loaded");`,
      "README.md": "# not code",
      "data.json": "{}",
    });
    await mkdir(join(dir, "nested.js")); // a directory with a loadable name
    await mkdir(join(dir, "sub"));
    await writeFile(join(dir, "sub", "Deep-Thing.js"), `throw new Error("only the top level is loaded");`);

    const loaded = await loadCustomFunctions(dir);
    expect(loaded.files).toEqual([
      join(dir, "a-default.js"),
      join(dir, "b-named.mjs"),
      join(dir, "c-typed.ts"),
    ]);
    expect(Object.keys(loaded.module)).toEqual(["Get-Thing", "Set-Thing", "Test-Typed"]);
    expect(loaded.sources.get("Set-Thing")).toBe(join(dir, "b-named.mjs"));
    await expect(loaded.module["Test-Typed"]!({ a: 1, b: 2 }, context as never)).resolves.toBe(2);
  });

  it("follows symlinked files, as a Kubernetes ConfigMap mounts them", async () => {
    const dir = await dirWith({});
    await mkdir(join(dir, "..data"));
    await writeFile(join(dir, "..data", "linked.mjs"), `export default { "Get-Linked": async () => 1 };`);
    await symlink(join(dir, "..data", "linked.mjs"), join(dir, "linked.mjs"));
    expect(Object.keys((await loadCustomFunctions(dir)).module)).toEqual(["Get-Linked"]);
  });

  it("returns nothing for an empty directory", async () => {
    const loaded = await loadCustomFunctions(await dirWith({}));
    expect(loaded.files).toEqual([]);
    expect(loaded.module).toEqual({});
  });

  it.each([
    [
      "broken.mjs",
      `export default { "Get-X": async () => 1 `,
      /broken\.mjs: cannot be imported \(\w*Error: /,
    ],
    ["throws.mjs", `throw new Error("no config");`, /throws\.mjs: cannot be imported \(Error: no config\)/],
    [
      "missing-dep.mjs",
      `import "no-such-package-xyz"; export default {};`,
      /missing-dep\.mjs: cannot be imported/,
    ],
    ["empty.mjs", `export {};`, /empty\.mjs: exports no function/],
    ["empty-default.mjs", `export default {};`, /empty-default\.mjs: exports no function/],
    [
      "fn-default.mjs",
      `export default async () => 1;`,
      /fn-default\.mjs: the default export must be an object of functions .* not a function/,
    ],
    [
      "camel.mjs",
      `export const getThing = async () => 1;`,
      /camel\.mjs: export "getThing" is not a Verb-Noun function name/,
    ],
    [
      "not-fn.mjs",
      `export default { "Get-Thing": "nope" };`,
      /not-fn\.mjs: default export key "Get-Thing" is a string, not a function/,
    ],
    [
      "twice.mjs",
      `const f = async () => 1; export { f as "Get-A" }; export default { "get-a": f };`,
      /twice\.mjs: "get-a" is exported twice/,
    ],
  ])("stops start-up for %s, naming the file and the problem", async (name, content, expected) => {
    const dir = await dirWith({ [name]: content });
    const message = await failureOf(loadCustomFunctions(dir));
    expect(message).toMatch(expected);
    expect(message).toContain(join(dir, name));
  });

  it("refuses two files declaring the same function, naming both", async () => {
    const dir = await dirWith({
      "a.mjs": `export default { "Get-Wave": async () => 1 };`,
      "b.mjs": `export default { "GET-WAVE": async () => 2 };`,
    });
    const message = await failureOf(loadCustomFunctions(dir));
    expect(message).toContain(
      `${join(dir, "b.mjs")}: custom function "GET-WAVE" is already declared by ${join(dir, "a.mjs")}`,
    );
  });

  it("refuses a custom function that would shadow a built-in one, naming its file", async () => {
    const dir = await dirWith({ "echo.mjs": `export default { "test-echo": async () => "mine" };` });
    const loaded = await loadCustomFunctions(dir);
    expect(() => createRegistryWithCustomFunctions([createDiagnosticFunctions()], loaded)).toThrow(
      `${join(dir, "echo.mjs")}: custom function "test-echo" has the name of the built-in function "Test-Echo"`,
    );
  });

  it("fails for a missing directory (the config check names the variable before this)", async () => {
    await expect(loadCustomFunctions(join(root, "absent"))).rejects.toThrow(/ENOENT/);
  });
});

describe("the shipped example, examples/custom-functions/Get-MigrationWave.ts", () => {
  const exampleDir = fileURLToPath(new URL("../../../../examples/custom-functions", import.meta.url));

  function job(Parameters: Record<string, unknown>): WorkerJobMessage {
    return {
      JobId: "step-5",
      BatchId: 2,
      WorkerId: "worker-01",
      FunctionName: "get-migrationwave",
      Parameters,
      CorrelationData: { StepExecutionId: 5, IsInitStep: false, RunbookName: "r", RunbookVersion: 1 },
    };
  }

  it("loads and runs through the registry like a standard function", async () => {
    const loaded = await loadCustomFunctions(exampleDir);
    expect(loaded.files).toEqual([join(exampleDir, "Get-MigrationWave.ts")]);
    const registry = createRegistryWithCustomFunctions([createDiagnosticFunctions()], loaded);
    expect(registry.names()).toContain("Get-MigrationWave");

    // Saturday 15 March 2025: the wave started on Monday 10 March.
    const result = await executeJob(job({ CutoverDate: "2025-03-15T10:30:00Z" }), registry, {
      timeoutMs: 5_000,
    });
    expect(result).toMatchObject({
      Status: "Success",
      Result: { complete: true, data: { Wave: "Wave-2025-03-10", WaveStart: "2025-03-10", DayOfWave: 6 } },
    });
    const custom = await executeJob(
      job({ CutoverDate: "2025-03-15", Prefix: "EMEA", WaveStartsOn: "6" }),
      registry,
      { timeoutMs: 5_000 },
    );
    expect(custom.Result).toEqual({
      complete: true,
      data: { Wave: "EMEA-2025-03-15", WaveStart: "2025-03-15", DayOfWave: 1 },
    });

    const invalid = await executeJob(job({ CutoverDate: "next tuesday" }), registry, { timeoutMs: 5_000 });
    expect(invalid.Error).toMatchObject({ Type: reasonCodes.workerInvalidParameters });
    expect(invalid.Error?.Message).toContain("CutoverDate");
    expect(invalid.Error?.Message).not.toContain("next tuesday");
  });
});
