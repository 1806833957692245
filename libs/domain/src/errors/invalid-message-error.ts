import type { z } from "zod";
import { NonRetriableError } from "./matoolkit-error.ts";
import { reasonCodes } from "./reason-codes.ts";

/**
 * A message whose body fails its schema (`message.invalid`). Non-retriable: the bus dead-letters
 * it at once with this reason instead of retrying it ten times. The reason names field paths and
 * the kind of problem only, never the values (a body may hold member data), and at most five.
 */
export class InvalidMessageError extends NonRetriableError {
  constructor(what: string, error: Pick<z.ZodError, "issues">) {
    const issues = error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.map(String).join(".") || "(body)"} ${issue.code}`)
      .join("; ");
    super(reasonCodes.messageInvalid, `Invalid ${what}: ${issues}`);
  }
}
