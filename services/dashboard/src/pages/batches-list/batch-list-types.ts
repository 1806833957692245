/** Wire shapes of GET /api/batches and GET /api/batches/{id} (read-models/batch-schemas.ts). */
export const batchStatuses = [
  "detected",
  "init_dispatched",
  "active",
  "paused",
  "completed",
  "failed",
  "cancelled",
] as const;
export type BatchStatus = (typeof batchStatuses)[number];

export interface BatchListItem {
  readonly id: number;
  readonly runbookName: string;
  readonly runbookVersion: number;
  readonly batchStartTime: string | null;
  readonly status: BatchStatus;
  readonly detectedAt: string;
  readonly isManual: boolean;
  readonly createdBy: string | null;
  readonly currentPhase: string | null;
  readonly outcome: string | null;
  /** The change ticket / request id (issue 31); absent from older servers. */
  readonly externalRef?: string | null;
  /** Members by status (active, failed, removed). */
  readonly memberCounts: Readonly<Record<string, number>>;
}

export interface CreatedBatch {
  readonly id: number;
  readonly memberCount: number;
}

/** One row of GET /api/members?key= (routes/members.routes.ts). */
export interface MemberBatch {
  readonly memberId: number;
  readonly memberKey: string;
  readonly memberStatus: string;
  readonly addedAt: string;
  readonly removedAt: string | null;
  /** When the member's personal data was erased; absent from servers without erasure. */
  readonly erasedAt?: string | null;
  readonly batchId: number;
  readonly batchStatus: BatchStatus;
  readonly externalRef: string | null;
  readonly runbookName: string;
  readonly runbookVersion: number;
}
