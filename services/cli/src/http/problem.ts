import { z } from "zod";
import { CliError, exitCodes } from "../errors.ts";

/**
 * The part of an RFC 9457 problem (application/problem+json) the CLI prints. Loose: the server
 * may add members, and a newer server's codes must still print.
 */
const problemSchema = z.looseObject({
  status: z.number().optional(),
  title: z.string().optional(),
  detail: z.string().optional(),
  code: z.string().min(1),
  problems: z
    .array(
      z.looseObject({
        message: z.string(),
        line: z.number().optional(),
        column: z.number().optional(),
        path: z.string().optional(),
      }),
    )
    .optional(),
});

/** Turns an error response into the CLI error printed as `error <code>: <detail>` (exit 1). */
export function errorFromResponse(status: number, statusText: string, body: string): CliError {
  const problem = parseProblem(body);
  if (problem === undefined) {
    // Not a problem document (a proxy's HTML page, an old server): the status is all we know.
    return new CliError(
      exitCodes.failed,
      `http.${status}`,
      `the admin API answered ${status} ${statusText}`.trim(),
    );
  }
  const message = problem.detail ?? problem.title ?? `the admin API answered ${status}`;
  return new CliError(exitCodes.failed, problem.code, message, problem.problems ?? []);
}

function parseProblem(body: string): z.infer<typeof problemSchema> | undefined {
  try {
    const parsed = problemSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
