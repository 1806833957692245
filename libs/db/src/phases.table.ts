import type { ApprovalTimeoutOutcome, Outcome, PhaseStatus } from "@matoolkit/domain";
import type { ColumnType, Insertable, Selectable, Updateable, GeneratedAlways } from "kysely";
import type { NullableTimestamp, StatusColumn } from "./column-types.ts";

export interface PhaseExecutionsTable {
  id: GeneratedAlways<number>;
  batchId: number;
  phaseName: string;
  /** Position of the phase in the runbook's phases list: the order phases run and are listed in. */
  sequence: number;
  offsetMinutes: number;
  /** batch_start_time + offset; null for manual batches (advanced by an admin). */
  dueAt: NullableTimestamp;
  runbookVersion: number;
  status: StatusColumn<PhaseStatus>;
  dispatchedAt: NullableTimestamp;
  completedAt: NullableTimestamp;
  /** When phase-due committed the last chunk of the phase's steps (null: still creating them). */
  stepsCreatedAt: NullableTimestamp;
  /** How the ended phase went for its members (issue 12); null while it runs, or cancelled/skipped. */
  outcome: Outcome | null;
  /** Members that succeeded in every step / failed, stamped with the outcome. */
  succeededMembers: number | null;
  failedMembers: number | null;
  /**
   * Approval gate (issue 30, migration 0015), copied from the runbook when the row is created: the
   * phase waits in `awaiting_approval` when it falls due, until approved, rejected or timed out.
   */
  approvalRequired: ColumnType<boolean, boolean | undefined, boolean>;
  /** Null: no timeout, the phase waits for a decision for as long as it takes. */
  approvalTimeoutSeconds: number | null;
  /** What the timeout decides; null when the phase has no timeout. */
  approvalTimeoutOutcome: ApprovalTimeoutOutcome | null;
  /** When the timeout applies, stamped as the phase starts waiting; null otherwise. */
  approvalExpiresAt: NullableTimestamp;
  /** How the wait ended; null while waiting or for a phase that never waited. */
  approvalDecision: "approved" | "rejected" | null;
}

export type PhaseExecution = Selectable<PhaseExecutionsTable>;
export type NewPhaseExecution = Insertable<PhaseExecutionsTable>;
export type PhaseExecutionUpdate = Updateable<PhaseExecutionsTable>;
