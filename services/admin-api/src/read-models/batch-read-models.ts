import {
  getBatch,
  getBatchWithRunbook,
  listNamedEvents,
  listInitsByBatch,
  listMembersPage,
  listPhases,
  listRollbacks,
  listStepsByBatch,
  noPhaseMembers,
  type Db,
  type PhaseExecution,
  type PhaseMemberCounts,
  type RollbackView,
} from "@matoolkit/db";
import { readBatchCounts } from "./batch-counts.ts";
import { batchSecretPolicy, batchSecrets, secretsOfMembers } from "./batch-secrets.ts";
import { maskEventReasons } from "./event-secrets.ts";
import { maskExecutionRow, maskMemberRow } from "./mask-rows.ts";

/**
 * What the batch read routes return beyond the raw rows: member counts (see batch-counts.ts) and
 * the rollbacks sent for failed executions. Each answers undefined when the batch does not exist.
 *
 * Every read is one round trip to the database where it can be: the statements a read needs run
 * side by side, and the batch is not looked up first when the rows read prove it exists (each
 * references it): only an empty answer needs the batch row to tell "nothing yet" from "no such
 * batch".
 *
 * Member data, params, results, error messages and event reasons are shown with secrets masked
 * (batch-secrets.ts, issue 25), for every role.
 */
export type PhaseWithCounts = PhaseExecution & { readonly memberCounts: PhaseMemberCounts };

/** GET /api/batches/{id}: the batch (without its YAML), member counts and a summary of each phase. */
export async function batchDetail(db: Db, batchId: number) {
  const [batch, counts, phases] = await Promise.all([
    getBatchWithRunbook(db, batchId),
    readBatchCounts(db, batchId),
    listPhases(db, batchId),
  ]);
  if (batch === undefined || counts === undefined) return undefined;
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
      outcome: phase.outcome,
      succeededMembers: phase.succeededMembers,
      failedMembers: phase.failedMembers,
      approvalRequired: phase.approvalRequired,
      approvalExpiresAt: phase.approvalExpiresAt,
      approvalDecision: phase.approvalDecision,
      memberCounts: counts.phases.get(phase.id) ?? noPhaseMembers,
    })),
  };
}

/** GET /api/batches/{id}/phases: every phase row with its member counts. */
export async function phasesWithCounts(db: Db, batchId: number): Promise<PhaseWithCounts[] | undefined> {
  const [counts, phases] = await Promise.all([readBatchCounts(db, batchId), listPhases(db, batchId)]);
  if (counts === undefined) return undefined;
  return phases.map((phase) => ({ ...phase, memberCounts: counts.phases.get(phase.id) ?? noPhaseMembers }));
}

/**
 * GET /api/batches/{id}/members: the members after `afterId` in insertion (id) order; at most
 * `limit` of them when given, else all. As for events, one row more than asked tells whether
 * another page follows: `nextAfterId` is then the page's last id, else null (always null
 * without `limit`, the answer holding every member).
 */
export async function memberPage(
  db: Db,
  batchId: number,
  page: { readonly afterId?: number | undefined; readonly limit?: number | undefined },
) {
  const [rows, policy] = await Promise.all([
    listMembersPage(db, batchId, {
      afterId: page.afterId,
      limit: page.limit === undefined ? undefined : page.limit + 1,
    }),
    batchSecretPolicy(db, batchId),
  ]);
  if (rows.length === 0 && !(await batchExists(db, batchId))) return undefined;
  const more = page.limit !== undefined && rows.length > page.limit;
  const shown = more ? rows.slice(0, page.limit) : rows;
  const secrets = secretsOfMembers(policy, shown);
  const items = shown.map((member) => maskMemberRow(secrets, member));
  return { items, nextAfterId: more ? (items.at(-1)?.id ?? null) : null };
}

/**
 * GET /api/batches/{id}/events: a page of the timeline after `afterId`, each event with the member
 * key, phase name and step name it is about (joined in the same statement, listNamedEvents). One
 * row more than asked tells whether another page follows without a count query.
 */
export async function eventPage(
  db: Db,
  batchId: number,
  page: { readonly afterId?: number | undefined; readonly limit: number },
) {
  const [rows, policy] = await Promise.all([
    listNamedEvents(db, batchId, { afterId: page.afterId, limit: page.limit + 1 }),
    batchSecretPolicy(db, batchId),
  ]);
  if (rows.length === 0 && !(await batchExists(db, batchId))) return undefined;
  const items = await maskEventReasons(db, rows.slice(0, page.limit), { batchId, policy });
  const nextAfterId = rows.length > page.limit ? (items.at(-1)?.id ?? null) : null;
  return { items, nextAfterId };
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
  if (init.length === 0 && steps.length === 0 && !(await batchExists(db, batchId))) return undefined;
  const [rollbacks, secrets] = await Promise.all([
    listRollbacks(db, batchId, {
      stepIds: steps.filter(mayHaveRollback).map((step) => step.id),
      initIds: init.filter(mayHaveRollback).map((row) => row.id),
    }),
    batchSecrets(
      db,
      batchId,
      steps.map((step) => step.batchMemberId),
    ),
  ]);
  const withRollback = <T extends { id: number }>(kind: "step" | "init", row: T) => ({
    ...row,
    rollback: rollbacks.get(`${kind}:${row.id}`) ?? (null as RollbackView | null),
  });
  return {
    init: init.map((row) => withRollback("init", maskExecutionRow(secrets, null, row))),
    // A for_each value (issue 30) shows as its position and count; the value itself is member
    // data, visible only where it was templated (params_json, masked as every param is).
    steps: steps.map(({ itemValue: _value, ...row }) =>
      withRollback("step", maskExecutionRow(secrets, row.batchMemberId, row)),
    ),
  };
}

/**
 * A rollback is sent for an execution with an on_failure sequence, on its terminal failure (no
 * retry left, or a poll timeout), and nothing moves an execution out of failed or poll_timeout
 * after that; so a page without such an execution (a batch that went well) needs no events read.
 */
function mayHaveRollback(execution: { readonly onFailure: string | null; readonly status: string }): boolean {
  return (
    execution.onFailure !== null && (execution.status === "failed" || execution.status === "poll_timeout")
  );
}

async function batchExists(db: Db, batchId: number): Promise<boolean> {
  return (await getBatch(db, batchId)) !== undefined;
}
