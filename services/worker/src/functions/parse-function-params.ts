import type { z } from "zod";
import { NonRetriableError, reasonCodes } from "@matoolkit/domain";

/**
 * Validates a function's parameters. The failure names the offending parameters and what was
 * expected, never the values: parameters carry member PII. Bad parameters will not get better on
 * retry, hence NonRetriableError.
 */
export function parseFunctionParams<T extends z.ZodType>(
  functionName: string,
  schema: T,
  params: Record<string, unknown>,
): z.infer<T> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.join(".") || "(parameters)"}: ${issue.message}`,
  );
  throw new NonRetriableError(reasonCodes.workerInvalidParameters, `${functionName}: ${problems.join("; ")}`);
}
