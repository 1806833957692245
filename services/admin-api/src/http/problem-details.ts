import type { Response } from "express";
import { z } from "zod";
import {
  problemCodes,
  problemTypes,
  problemTypeUri,
  type ProblemCode,
  type StatusOf,
} from "./problem-types.ts";

/**
 * RFC 9457 problem details, the body of every error response: the standard members `type`,
 * `title`, `status`, `detail`, plus `code` (the stable reason a script branches on) and named
 * extension members. Bodies name lines, columns and parameters, never member data or tokens.
 */
export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** One mistake in a runbook (line, column, path) or a CSV (line). */
export const problemItemSchema = z.object({
  message: z.string(),
  line: z.int().optional().meta({ description: "1-based" }),
  column: z.int().optional().meta({ description: "1-based" }),
  path: z.string().optional().meta({ description: "YAML path such as `phases[0].steps[1].name`" }),
});
export type ProblemItem = z.infer<typeof problemItemSchema>;

export const problemExtensionsSchema = z.object({
  problems: z.array(problemItemSchema).optional().meta({
    description: "Every mistake found (runbook.invalid, member_data.invalid, validation.invalid_input)",
  }),
  checks: z
    .record(z.string(), z.string())
    .optional()
    .meta({ description: "service.not_ready: each readiness check and its state (`ok` or why not)" }),
  existingBatchId: z
    .int()
    .optional()
    .meta({ description: "batch.duplicate: the batch created moments ago from the same runbook and CSV" }),
});
export type ProblemExtensions = Readonly<z.infer<typeof problemExtensionsSchema>>;

export const problemDetailsSchema = z
  .looseObject({
    type: z.string().meta({ description: "URI reference of the problem type: `/problems/{code}`" }),
    title: z.string().meta({ description: "Fixed short summary of the code" }),
    status: z.int().min(400).max(599),
    detail: z.string().meta({ description: "What went wrong in this occurrence" }),
    code: z.enum(problemCodes).meta({ description: "Stable reason code; branch on this" }),
    ...problemExtensionsSchema.shape,
  })
  .meta({ id: "Problem", description: "RFC 9457 problem details (application/problem+json)" });
export type ProblemDetails = z.infer<typeof problemDetailsSchema>;

export function problemDetails<C extends ProblemCode>(
  code: C,
  detail: string,
  options: { readonly status?: StatusOf<C>; readonly extensions?: ProblemExtensions } = {},
): ProblemDetails {
  const { title, statuses } = problemTypes[code];
  // Standard members last: an extension can never overwrite them.
  return {
    ...options.extensions,
    type: problemTypeUri(code),
    title,
    status: options.status ?? statuses[0],
    detail,
    code,
  };
}

export function sendProblem(res: Response, problem: ProblemDetails): void {
  res.status(problem.status).type(PROBLEM_CONTENT_TYPE).json(problem);
}
