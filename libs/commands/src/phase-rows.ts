import type { NewPhaseInput } from "@matoolkit/db";
import type { RunbookDefinition } from "@matoolkit/domain";

/**
 * One phase execution per runbook phase, in runbook order, due at batch_start_time minus the
 * phase's offset (000 "phases": `due_at = batch_start_time - offset_minutes`); null for a manual
 * batch (no start time: advanced by an operator). The phase's approval gate (issue 30) is copied
 * onto its row. The one mapping every creator of phases uses (admin API, scheduler), so none can
 * forget the gate.
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
    approval: phase.approval,
  }));
}
