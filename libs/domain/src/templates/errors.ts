import { NonRetriableError, reasonCodes } from "../errors/index.ts";

/**
 * 000 "Unresolved Variables": the step is not dispatched (retrying cannot help). The message names
 * the missing variables only — never any resolved value, since member data is PII.
 */
export class TemplateResolutionError extends NonRetriableError {
  /** Every missing variable name, sorted and unique (the message may be truncated; this never is). */
  readonly missing: readonly string[];

  constructor(missing: Iterable<string>) {
    const names = [...new Set(missing)].sort();
    super(
      reasonCodes.templateUnresolved,
      `unresolved template variable${names.length === 1 ? "" : "s"}: ${names.join(", ")} ` +
        "(not found in member data, worker outputs or special variables)",
    );
    this.missing = names;
  }
}
