import type { Request } from "express";
import type { z } from "zod";
import { CsvUpload } from "../csv/csv-upload.ts";
import { badRequest } from "../http/api-error.ts";
import type { ProblemItem } from "../http/problem-details.ts";
import type { BodySpec, Operation } from "./operation.ts";

export interface ValidRequest {
  readonly params: unknown;
  readonly query: unknown;
  readonly body: unknown;
}

/**
 * Parses path, query and body with the operation's schemas (the ones its OpenAPI description
 * shows). Every mistake is reported at once: a 400 whose detail names each parameter
 * ("'limit' must be between 1 and 1000") and whose `problems` list them. zod's messages describe
 * what is expected, never the value received, so nothing the caller sent is echoed back.
 */
export function validateRequest(operation: Operation, req: Request): ValidRequest {
  const problems: ProblemItem[] = [];
  const summaries: string[] = [];
  const part = (schema: z.ZodObject | undefined, value: unknown) => {
    if (schema === undefined) return undefined;
    const parsed = schema.safeParse(value ?? {});
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) {
      const path = issue.path.map(String).join(".");
      problems.push({ path, message: issue.message });
      summaries.push(`'${path}' ${issue.message}`);
    }
    return undefined;
  };
  const params = part(operation.params, req.params);
  const query = part(operation.query, req.query);
  let body: unknown;
  if (operation.body !== undefined) {
    const parsed = parseBody(operation.body, req);
    if (parsed.success) body = parsed.data;
    else {
      problems.push(...parsed.problems);
      summaries.push(operation.body.invalid);
    }
  }
  if (summaries.length > 0) throw badRequest(summaries.join("; "), { problems });
  return { params, query, body };
}

type BodyOutcome = { success: true; data: unknown } | { success: false; problems: ProblemItem[] };

function parseBody(spec: BodySpec, req: Request): BodyOutcome {
  const mediaType = req.is(Object.keys(spec.content));
  const schema = typeof mediaType === "string" ? spec.content[mediaType] : undefined;
  // No parser ran (no body, or a type the operation does not take): req.body is undefined.
  if (schema === undefined || req.body === undefined) {
    return {
      success: false,
      problems: [{ message: `Content-Type must be one of ${Object.keys(spec.content).join(", ")}` }],
    };
  }
  // A member upload (BodySpec.upload): its schema sees its first non-blank character (csv-upload.ts).
  const upload = req.body instanceof CsvUpload ? req.body : undefined;
  const parsed = schema.safeParse(upload?.leadingText() ?? req.body);
  if (parsed.success) return { success: true, data: upload ?? parsed.data };
  return {
    success: false,
    problems: parsed.error.issues.map((issue) => ({
      path: issue.path.map(String).join("."),
      message: issue.message,
    })),
  };
}
