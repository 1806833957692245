import { LineCounter, parseDocument } from "yaml";
import { approvalFindings } from "./approval-rules.ts";
import { hasCycle } from "./cycles.ts";
import { forEachFindings } from "./for-each-rules.ts";
import { dataSourceFindings } from "./data-source-rules.ts";
import { externalRefFindings } from "./external-ref-rules.ts";
import { locateFinding } from "./locate.ts";
import type { RunbookDefinition } from "./model.ts";
import type { RunbookProblem } from "./problems.ts";
import { RunbookValidationError, compareProblems } from "./problems.ts";
import { isMapping } from "./raw.ts";
import { secretMarkerFindings } from "./secret-rules.ts";
import { stepFindings } from "./step-rules.ts";
import { unstorableTextFindings } from "./text-rules.ts";
import { toRunbookDefinition } from "./to-model.ts";
import { whenFindings } from "./when-rules.ts";
import { runbookYamlSchema } from "./yaml-schema.ts";
import { findingsFromZodIssues } from "./zod-issues.ts";

export type ParseResult =
  { ok: true; runbook: RunbookDefinition } | { ok: false; problems: RunbookProblem[] };

/**
 * Validates a runbook and reports every problem in one pass (sorted by position), so an author fixes
 * them all before the next publish attempt. YAML syntax errors are reported alone: the structure
 * behind them is unreliable, and checking it would produce misleading noise.
 */
export function parseRunbook(yamlText: string): ParseResult {
  const lineCounter = new LineCounter();
  const document = parseDocument(yamlText, { lineCounter, prettyErrors: false });
  if (document.errors.length > 0) {
    const problems = document.errors.map((error) => {
      const { line, col } = lineCounter.linePos(error.pos[0]);
      return { path: "", line, column: col, message: `YAML syntax error: ${error.message}` };
    });
    return { ok: false, problems: problems.sort(compareProblems) };
  }

  let raw: unknown;
  try {
    raw = document.toJS();
  } catch (error) {
    // e.g. excessive alias expansion (billion laughs)
    const message = error instanceof Error ? error.message : "unreadable YAML";
    return { ok: false, problems: [{ path: "", line: 1, column: 1, message: `YAML error: ${message}` }] };
  }
  if (hasCycle(raw)) {
    const message = "YAML error: an alias refers to its own anchor (a structure that contains itself)";
    return { ok: false, problems: [{ path: "", line: 1, column: 1, message }] };
  }

  const parsed = runbookYamlSchema.safeParse(raw, { reportInput: true });
  const findings = [
    ...(parsed.success ? [] : findingsFromZodIssues(parsed.error.issues)),
    ...(isMapping(raw)
      ? [
          ...dataSourceFindings(raw),
          ...stepFindings(raw),
          ...secretMarkerFindings(raw),
          ...approvalFindings(raw),
          ...whenFindings(raw),
          ...forEachFindings(raw),
          ...externalRefFindings(raw),
        ]
      : []),
    ...unstorableTextFindings(raw),
  ];
  if (findings.length > 0 || !parsed.success) {
    const problems = findings.map((finding) => locateFinding(document, lineCounter, finding, yamlText));
    return { ok: false, problems: problems.sort(compareProblems) };
  }
  return { ok: true, runbook: toRunbookDefinition(parsed.data) };
}

export function parseRunbookOrThrow(yamlText: string): RunbookDefinition {
  const result = parseRunbook(yamlText);
  if (!result.ok) throw new RunbookValidationError(result.problems);
  return result.runbook;
}
