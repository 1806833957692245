import {
  countBatchMembers,
  listInitsByBatch,
  listPhases,
  listRollbacks,
  listStepsByBatch,
  noPhaseMembers,
  type BatchWithRunbook,
  type Db,
  type PhaseExecution,
  type PhaseMemberCounts,
  type RollbackView,
} from "@matoolkit/db";

/**
 * What the batch read routes return beyond the raw rows: member counts (one aggregate query per
 * request, see countBatchMembers) and the rollbacks sent for failed executions.
 */
export type PhaseWithCounts = PhaseExecution & { readonly memberCounts: PhaseMemberCounts };

/** GET /api/batches/{id}: the batch (without its YAML), member counts and a summary of each phase. */
export async function batchDetail(db: Db, batch: BatchWithRunbook) {
  const [counts, phases] = await Promise.all([countBatchMembers(db, batch.id), listPhases(db, batch.id)]);
  const { yamlContent: _yaml, ...rest } = batch;
  return {
    ...rest,
    memberCounts: counts.members,
    phases: phases.map((phase) => ({
      id: phase.id,
      phaseName: phase.phaseName,
      sequence: phase.sequence,
      status: phase.status,
      dueAt: phase.dueAt,
      memberCounts: counts.phases.get(phase.id) ?? noPhaseMembers,
    })),
  };
}

/** GET /api/batches/{id}/phases: every phase row with its member counts. */
export async function phasesWithCounts(db: Db, batchId: number): Promise<PhaseWithCounts[]> {
  const [counts, phases] = await Promise.all([countBatchMembers(db, batchId), listPhases(db, batchId)]);
  return phases.map((phase) => ({ ...phase, memberCounts: counts.phases.get(phase.id) ?? noPhaseMembers }));
}

/**
 * GET /api/batches/{id}/steps: init executions, then a page of step executions, each with
 * `rollback` (the on_failure sequence sent when it failed, from the events timeline) or null.
 */
export async function executionsWithRollbacks(
  db: Db,
  batchId: number,
  page: { readonly limit: number; readonly offset: number },
) {
  const [init, steps] = await Promise.all([
    listInitsByBatch(db, batchId),
    listStepsByBatch(db, batchId, page),
  ]);
  const rollbacks = await listRollbacks(db, batchId, {
    stepIds: steps.filter((step) => step.onFailure !== null).map((step) => step.id),
    initIds: init.filter((row) => row.onFailure !== null).map((row) => row.id),
  });
  const withRollback = <T extends { id: number }>(kind: "step" | "init", row: T) => ({
    ...row,
    rollback: rollbacks.get(`${kind}:${row.id}`) ?? (null as RollbackView | null),
  });
  return {
    init: init.map((row) => withRollback("init", row)),
    steps: steps.map((row) => withRollback("step", row)),
  };
}
