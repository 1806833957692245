import type { ExecutionRow } from "./executions.ts";
import { getPhase, type PhaseExecution } from "@matoolkit/db";
import type { RunbookDefinition } from "@matoolkit/domain";
import type { BatchInfo } from "./batch-info.ts";
import type { HandlerScope } from "./context.ts";

/**
 * 000 "Worker Output Variables": a step's output_params map template variable → result field.
 * Fields are read from `Result.data` first (the `{complete, data}` shape) and then from `Result`.
 * Missing fields are skipped: a later step that needs one fails with template.unresolved.
 */
export async function extractOutputs(
  scope: HandlerScope,
  args: { row: ExecutionRow; batch: BatchInfo },
): Promise<Record<string, unknown>> {
  const { row, batch } = args;
  if (row.phaseExecutionId === null) return {};
  const phase = await getPhase(scope.trx, row.phaseExecutionId);
  if (phase === undefined) return {};
  const runbook = await scope.runbooks.get(scope.trx, batch.runbookName, phase.runbookVersion);
  return outputsOf(row, phase, runbook);
}

/** The step's output params picked from its result (the step is found by phase name and index). */
export function outputsOf(
  row: Pick<ExecutionRow, "stepIndex" | "resultJson">,
  phase: Pick<PhaseExecution, "phaseName">,
  runbook: RunbookDefinition,
): Record<string, unknown> {
  const step = runbook.phases.find((p) => p.name === phase.phaseName)?.steps[row.stepIndex];
  if (step === undefined || Object.keys(step.outputParams).length === 0) return {};
  return pickOutputs(row.resultJson, step.outputParams);
}

export function pickOutputs(result: unknown, outputParams: Record<string, string>): Record<string, unknown> {
  const sources = [fieldOf(result, "data"), result].filter(isRecord);
  const outputs: Record<string, unknown> = {};
  for (const [variable, field] of Object.entries(outputParams)) {
    const source = sources.find((candidate) => Object.hasOwn(candidate, field));
    if (source !== undefined) outputs[variable] = source[field];
  }
  return outputs;
}

function fieldOf(value: unknown, field: string): unknown {
  return isRecord(value) ? value[field] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
