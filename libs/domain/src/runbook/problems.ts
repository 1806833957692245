import { NonRetriableError, reasonCodes } from "../errors/index.ts";

/** A single thing wrong with a runbook, positioned so an author can jump straight to it. */
export interface RunbookProblem {
  /** YAML path such as `phases[1].steps[0].on_failure`; "" for the document itself. */
  path: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  message: string;
}

export type PathSegment = string | number;

/**
 * A problem before it has a position. `anchor: "key"` points at the key itself (unknown keys);
 * otherwise at the value, or — when the path does not exist, i.e. a missing field — at the nearest
 * existing ancestor, which is the parent mapping.
 */
export interface Finding {
  path: readonly PathSegment[];
  message: string;
  anchor?: "key" | "value";
  /** Of a string value: the problem is at this character of it (a `when:` condition's). */
  offset?: number;
}

export function formatPath(path: readonly PathSegment[]): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else text += text === "" ? segment : `.${segment}`;
  }
  return text;
}

export function formatProblem(problem: RunbookProblem): string {
  const where = `${problem.line}:${problem.column}`;
  return problem.path === "" ? `${where} ${problem.message}` : `${where} ${problem.path}: ${problem.message}`;
}

export function compareProblems(a: RunbookProblem, b: RunbookProblem): number {
  return (
    a.line - b.line ||
    a.column - b.column ||
    a.path.localeCompare(b.path) ||
    a.message.localeCompare(b.message)
  );
}

/** Thrown by parseRunbookOrThrow; the message lists every problem so one publish attempt shows them all. */
export class RunbookValidationError extends NonRetriableError {
  readonly problems: readonly RunbookProblem[];

  constructor(problems: readonly RunbookProblem[]) {
    const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
    super(reasonCodes.runbookInvalid, `runbook is invalid (${count})`);
    // The base class shortens messages to one line; authors need the full list (CLI, logs). It holds
    // runbook text only, never member data, and toSafeError re-sanitizes it before anything is stored.
    this.message = `runbook is invalid (${count}):\n${problems.map((p) => `  ${formatProblem(p)}`).join("\n")}`;
    this.problems = problems;
  }
}
