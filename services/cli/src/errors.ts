/** One mistake the API reported (runbook line:column path, CSV line), printed one per line. */
export interface ProblemLine {
  readonly message: string;
  readonly line?: number | undefined;
  readonly column?: number | undefined;
  readonly path?: string | undefined;
}

/**
 * Exit codes scripts rely on (docs/cli.md): 0 success, 1 the API, the network or
 * sign-in failed, 2 the invocation or the configuration is wrong (nothing was sent), 3/4 from
 * `batch watch` when the batch ended failed/cancelled.
 */
export const exitCodes = {
  ok: 0,
  failed: 1,
  usage: 2,
  batchFailed: 3,
  batchCancelled: 4,
} as const;

/**
 * An error the CLI reports as `error <code>: <message>` on stderr, followed by the problems. The
 * message must be safe to print: never a token, a key or member data.
 */
export class CliError extends Error {
  constructor(
    readonly exitCode: number,
    readonly code: string,
    message: string,
    readonly problems: readonly ProblemLine[] = [],
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** Bad configuration or arguments found by the CLI itself: exit 2, nothing was sent. */
export function usageError(code: string, message: string): CliError {
  return new CliError(exitCodes.usage, code, message);
}

export function formatProblem(problem: ProblemLine): string {
  const position =
    problem.line === undefined
      ? ""
      : problem.column === undefined
        ? `${problem.line} `
        : `${problem.line}:${problem.column} `;
  const path = problem.path === undefined || problem.path === "" ? "" : `${problem.path} `;
  return `${position}${path}${problem.message}`;
}

export function formatCliError(error: CliError): string {
  const lines = [
    `error ${error.code}: ${error.message}`,
    ...error.problems.map((p) => `  ${formatProblem(p)}`),
  ];
  return `${lines.join("\n")}\n`;
}
