import { LineCounter, parseDocument } from "yaml";
import { locateFinding } from "./locate.ts";
import type { Finding, RunbookProblem } from "./problems.ts";
import { compareProblems } from "./problems.ts";

/**
 * Positions problems found outside the parser (checks that need the server's configuration,
 * such as which files a csv source may read) the same way parse problems are: line and column
 * of the YAML value they are about. Only for YAML that parseRunbook already accepted.
 */
export function positionRunbookProblems(yamlText: string, findings: readonly Finding[]): RunbookProblem[] {
  const lineCounter = new LineCounter();
  const document = parseDocument(yamlText, { lineCounter, prettyErrors: false });
  return findings
    .map((finding) => locateFinding(document, lineCounter, finding, yamlText))
    .sort(compareProblems);
}
