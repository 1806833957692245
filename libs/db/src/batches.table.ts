import type { BatchStatus, Outcome } from "@matoolkit/domain";
import type { Insertable, Selectable, Updateable, GeneratedAlways } from "kysely";
import type { CreatedAt, NullableTimestamp, StatusColumn } from "./column-types.ts";

export interface BatchesTable {
  id: GeneratedAlways<number>;
  runbookId: number;
  /** Reference time for phase offsets; null for manual batches. */
  batchStartTime: NullableTimestamp;
  status: StatusColumn<BatchStatus>;
  detectedAt: CreatedAt;
  initDispatchedAt: NullableTimestamp;
  isManual: boolean;
  createdBy: string | null;
  /** Manual batches: the phase being advanced. */
  currentPhase: string | null;
  /** How the ended batch went for its members (issue 12); null while it runs, or cancelled. */
  outcome: Outcome | null;
  /** Members that succeeded / failed, stamped with the outcome. */
  succeededMembers: number | null;
  failedMembers: number | null;
  /** When the retention purge removed the batch's personal data (migration 0019); null before. */
  purgedAt: NullableTimestamp;
  /** How: `scrub` (keys and statuses kept) or `delete` (member and execution rows removed). */
  purgeMode: PurgeMode | null;
}

export type PurgeMode = "scrub" | "delete";

export type Batch = Selectable<BatchesTable>;
export type NewBatch = Insertable<BatchesTable>;
export type BatchUpdate = Updateable<BatchesTable>;
