import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseRunbook } from "../../libs/domain/src/runbook/parse-runbook.ts";
import {
  retryYamlSchema,
  runbookYamlSchema,
  stepYamlSchema,
} from "../../libs/domain/src/runbook/yaml-schema.ts";
import { documentedKeyPaths, runbookKeyPaths } from "./runbook-keys.ts";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const reference = readFileSync(join(repoRoot, "docs/runbook-reference.md"), "utf8");
/** The mappings used in several places, documented once each. */
const shared = new Map<z.ZodType, string>([
  [stepYamlSchema, "steps[]"],
  [retryYamlSchema, "retry"],
]);

/** The fenced block right after `<!-- runbook-reference:<marker> -->`. */
function blockAfter(marker: string): string {
  const match = new RegExp(`<!-- runbook-reference:${marker} -->\\s*\`\`\`\\w*\\n([\\s\\S]*?)\`\`\``).exec(
    reference,
  );
  if (match === null) throw new Error(`no block marked ${marker} in docs/runbook-reference.md`);
  return match[1]!;
}

describe("docs/runbook-reference.md", () => {
  it("documents every key the parser accepts, and no key it would refuse", () => {
    const accepted = runbookKeyPaths(runbookYamlSchema, shared);
    const documented = documentedKeyPaths(reference);
    expect(accepted).toEqual(
      expect.arrayContaining(["phases[].approval", "steps[].timeout", "steps[].when"]),
    );
    expect(
      accepted.filter((key) => !documented.includes(key)),
      "keys of yaml-schema.ts missing from the reference",
    ).toEqual([]);
    expect(
      documented.filter((key) => !accepted.includes(key)),
      "keys in the reference the parser does not accept",
    ).toEqual([]);
    expect(new Set(documented).size, "a key documented twice").toBe(documented.length);
  });

  it("shows the refusal of unknown keys exactly as the parser reports it", () => {
    const parsed = parseRunbook(blockAfter("refused-yaml"));
    expect(parsed.ok).toBe(false);
    const problems = parsed.ok ? [] : parsed.problems;
    // As `matoolkit runbook publish` prints each problem (services/cli/src/errors.ts formatProblem).
    const printed = problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`).join("\n");
    expect(printed).toContain('unknown key "timout"');
    expect(`${printed}\n`).toBe(blockAfter("refused-problems"));
    // README's runbook reference quotes one of these lines: it must stay the parser's words too.
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    expect(readme).toContain(printed.split("\n").find((line) => line.includes('unknown key "timout"')));
  });
});

describe("runbookKeyPaths", () => {
  it("lists nested, listed and named keys, shared mappings once under their own name", () => {
    const leg = z.strictObject({ id: z.string(), wait: z.preprocess((v) => v, z.string()).optional() });
    const schema = z.strictObject({
      title: z.string(),
      legs: z.array(leg).optional(),
      spare: leg.optional(),
      alternates: z.record(z.string(), z.array(leg)).optional(),
      labels: z.record(z.string(), z.string()),
    });
    expect(runbookKeyPaths(schema, new Map([[leg, "legs[]"]]))).toEqual([
      "alternates",
      "alternates.<name>",
      "labels",
      "legs",
      "legs[].id",
      "legs[].wait",
      "spare",
      "title",
    ]);
  });
});

describe("documentedKeyPaths", () => {
  it("reads the first cell of table rows when it is one code span", () => {
    const markdown = [
      "| Key | Type |",
      "| --- | ---- |",
      "| `phases[].name` | name |",
      "| `a` and `b` | both |",
      "Text with `not.a.key` |",
    ].join("\n");
    expect(documentedKeyPaths(markdown)).toEqual(["phases[].name"]);
  });
});
