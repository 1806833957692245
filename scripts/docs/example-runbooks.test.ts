import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseRunbook } from "../../libs/domain/src/runbook/parse-runbook.ts";

const examples = fileURLToPath(new URL("../../examples", import.meta.url));
/** The one example that exists to show refusals (docs/runbook-authoring and the CLI e2e). */
const refusedOnPurpose = "bad-runbook.yaml";

// Readers copy the examples as the starting point of their own runbooks: each must publish.
describe("example runbooks", () => {
  const files = readdirSync(examples).filter((file) => file.endsWith(".yaml"));

  it.each(files.filter((file) => file !== refusedOnPurpose))("%s publishes with no problem", (file) => {
    const result = parseRunbook(readFileSync(join(examples, file), "utf8"));
    expect(result.ok ? [] : result.problems).toEqual([]);
  });

  it(`${refusedOnPurpose} is refused, with its problems at their lines`, () => {
    const result = parseRunbook(readFileSync(join(examples, refusedOnPurpose), "utf8"));
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.problems.every((problem) => problem.line > 0)).toBe(true);
  });
});
