import type { NewPhaseInput } from "@matoolkit/db";
import type { RunbookDefinition } from "@matoolkit/domain";

/**
 * One phase execution per runbook phase, in runbook order, due at batch_start_time minus the
 * phase's offset (000 "phases": `due_at = batch_start_time - offset_minutes`).
 */
export function phaseRowsFor(
  definition: RunbookDefinition,
  runbookVersion: number,
  batchStart: Date | null,
): NewPhaseInput[] {
  return definition.phases.map((phase, sequence) => ({
    phaseName: phase.name,
    sequence,
    offsetMinutes: phase.offsetMinutes,
    dueAt: batchStart === null ? null : new Date(batchStart.getTime() - phase.offsetMinutes * 60_000),
    runbookVersion,
  }));
}
