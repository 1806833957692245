import { z } from "zod";
import { approvalTimeoutOutcomes, dataSourceTypes, multiValuedFormats } from "./model.ts";
import { InvalidTimeExpressionError, parseDuration, parseOffset } from "./time.ts";

/**
 * The runbook YAML exactly as authors write it (snake_case). Only shapes, types, enums and formats live
 * here; rules spanning several fields are in the *-rules.ts files so they are reported even when zod
 * found other problems (zod skips an object's refinements once the object has any issue).
 */

/** A mapping that rejects unknown keys, so a typo like `poll_intervl` is never silently ignored. */
function strictMapping<Shape extends z.ZodRawShape>(shape: Shape) {
  const allowed = Object.keys(shape).join(", ");
  // The message becomes the suffix of each "unknown key" problem (see zod-issues.ts).
  return z.strictObject(shape, {
    error: (issue) => (issue.code === "unrecognized_keys" ? `allowed keys: ${allowed}` : undefined),
  });
}

const nonEmptyText = z.string().min(1, "must not be empty");
/**
 * Names end up in URLs, indexed columns and log lines: PostgreSQL cannot index a value over about
 * 2.7 kB, so an unbounded name would be a 500 at publish instead of a clear refusal here.
 */
export const MAX_NAME_LENGTH = 128;
const nameText = nonEmptyText.max(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`);

function timeText(parse: (text: string) => number) {
  // A bare number (`timeout: 10`) is almost always a forgotten unit: read it as text so the author
  // gets the "expected <n><d|h|m|s>" message instead of a type error.
  const asText = (value: unknown) => (typeof value === "number" ? String(value) : value);
  return z.preprocess(asText, z.string()).superRefine((text, ctx) => {
    try {
      parse(text);
    } catch (error) {
      if (!(error instanceof InvalidTimeExpressionError)) throw error;
      ctx.addIssue({ code: "custom", message: error.message });
    }
  });
}

const offsetText = timeText(parseOffset);
const durationText = timeText(parseDuration);

export const retryYamlSchema = strictMapping({
  max_retries: z.number().int().min(0, "max_retries must be an integer >= 0 (0 disables retry)"),
  // Optional only for `max_retries: 0`; retry-rules.ts requires it otherwise.
  interval: durationText.optional(),
});

export const pollYamlSchema = strictMapping({
  interval: durationText,
  timeout: durationText,
});

// A worker pool's id becomes a subscription name and a Service Bus SQL filter value: the same
// characters MATOOLKIT_WORKER_ID accepts (no worker could ever take another pool's jobs).
const workerIdText = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/,
    "must be letters, digits, '.', '_' or '-' (at most 63), starting with a letter or digit",
  );

/**
 * The explicit secret markers (`data_source.secret_columns`, a step's `secret_params`): lists of
 * names, masked as `***` in every read model beside the names that look secret (mask-secrets.ts).
 * secret-rules.ts checks what the names refer to.
 */
const secretNames = z.array(nonEmptyText);

/**
 * A `when:` condition (issue 30). Only its shape here: when-rules.ts parses it and checks what it
 * refers to, so each problem points at its character inside the text.
 */
const conditionText = nonEmptyText;

export const stepYamlSchema = strictMapping({
  name: nameText,
  worker_id: workerIdText,
  function: nonEmptyText,
  params: z.record(z.string(), z.unknown()).optional(),
  secret_params: secretNames.optional(),
  output_params: z.record(z.string(), z.string()).optional(),
  on_failure: nameText.optional(),
  poll: pollYamlSchema.optional(),
  retry: retryYamlSchema.optional(),
  timeout: durationText.optional(),
  when: conditionText.optional(),
  /** `"{{List}}"` (issue 30): for-each-rules.ts checks what it names. */
  for_each: nonEmptyText.optional(),
});
export type StepYaml = z.infer<typeof stepYamlSchema>;

export const phaseYamlSchema = strictMapping({
  name: nameText,
  offset: offsetText,
  when: conditionText.optional(),
  // Approval gate (issue 30): the phase waits in awaiting_approval until an operator approves it.
  // One word rather than a boolean, so the YAML reads as what it asks for.
  approval: z.enum(["required"]).optional(),
  approval_timeout: durationText.optional(),
  approval_timeout_outcome: z.enum(approvalTimeoutOutcomes).optional(),
  steps: z.array(stepYamlSchema).min(1, "a phase needs at least one step"),
});

export const dataSourceYamlSchema = strictMapping({
  type: z.enum(dataSourceTypes),
  connection: nonEmptyText.optional(),
  warehouse_id: nonEmptyText.optional(),
  query: nonEmptyText.optional(),
  path: nonEmptyText.optional(),
  primary_key: nameText,
  batch_time_column: nameText.optional(),
  batch_time: z.literal("immediate").optional(),
  /** The column holding the batch's change ticket / request id (issue 31): its externalRef. */
  external_ref_column: nameText.optional(),
  multi_valued_columns: z
    .array(strictMapping({ name: nameText, format: z.enum(multiValuedFormats) }))
    .optional(),
  secret_columns: secretNames.optional(),
  /** The columns `when:` conditions may read (besides primary_key and the columns named above). */
  columns: z.array(nameText).optional(),
});

export const runbookYamlSchema = strictMapping({
  name: nameText,
  description: z.string().optional(),
  data_source: dataSourceYamlSchema,
  retry: retryYamlSchema.optional(),
  init: z.array(stepYamlSchema).optional(),
  phases: z.array(phaseYamlSchema).min(1, "at least one phase is required"),
  on_member_removed: z.array(stepYamlSchema).optional(),
  rollbacks: z.record(z.string(), z.array(stepYamlSchema)).optional(),
});
export type RunbookYaml = z.infer<typeof runbookYamlSchema>;
