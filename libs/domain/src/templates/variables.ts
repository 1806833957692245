/** Lookup table for template resolution; only own properties count, so `{{constructor}}` is never found. */
export type TemplateVariables = Readonly<Record<string, unknown>>;

export const SPECIAL_VARIABLES = ["_batch_id", "_batch_start_time"] as const;

/**
 * .NET `DateTime.ToString("o")` for a UTC instant: 7 fractional digits and a Z
 * (`2025-03-15T10:30:00.0000000Z`), which is what the PowerShell workers expect. JS dates carry
 * milliseconds, so the last four digits are always zero and the text parses back to the same instant.
 */
export function formatRoundTripUtc(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new RangeError("cannot format an invalid date");
  return date.toISOString().replace(/\.(\d{3})Z$/, (_match, millis: string) => `.${millis}0000Z`);
}

export interface TemplateVariableSources {
  /** The member's data_json (absent for init steps, which run once per batch). */
  memberData?: Readonly<Record<string, unknown>> | null;
  /** The member's worker_data_json: outputs captured by earlier steps' output_params. */
  workerData?: Readonly<Record<string, unknown>> | null;
  batchId: number;
  /** Null for manual batches, in which case `{{_batch_start_time}}` is unresolvable. */
  batchStartTime: Date | null;
}

/**
 * Precedence, lowest first: data columns, then worker outputs (a step's output is fresher than the
 * source snapshot), then the special variables, which a column can never shadow.
 */
export function buildTemplateVariables(sources: TemplateVariableSources): TemplateVariables {
  const variables: Record<string, unknown> = { ...sources.memberData, ...sources.workerData };
  variables._batch_id = sources.batchId;
  if (sources.batchStartTime) variables._batch_start_time = formatRoundTripUtc(sources.batchStartTime);
  else delete variables._batch_start_time;
  return variables;
}
