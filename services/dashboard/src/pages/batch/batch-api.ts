import { ApiError, apiFetch, apiSend } from "../../api/client.ts";

/**
 * The admin API reads and actions the batch page uses, typed as the OpenAPI document describes
 * them (components BatchDetail, BatchGrid, EventPage, BatchProgress, …). Only public endpoints.
 */
export type BatchStatus =
  "detected" | "init_dispatched" | "active" | "paused" | "completed" | "failed" | "cancelled";
export type ExecutionStatus =
  "pending" | "dispatched" | "succeeded" | "failed" | "polling" | "poll_timeout" | "cancelled" | "skipped";
export type MemberStatus = "active" | "removed" | "failed";

export interface PhaseSummary {
  readonly id: number;
  readonly phaseName: string;
  readonly sequence: number;
  readonly status: string;
  readonly dueAt: string | null;
  readonly outcome: string | null;
  readonly succeededMembers: number | null;
  readonly failedMembers: number | null;
  /** The runbook gates the phase (issue 30): when due it waits in awaiting_approval. */
  readonly approvalRequired: boolean;
  /** When the approval timeout decides, once the phase waits; null otherwise. */
  readonly approvalExpiresAt: string | null;
  readonly approvalDecision: "approved" | "rejected" | null;
  readonly memberCounts: {
    succeeded: number;
    /** Members whose every step of the phase a when: condition skipped (issue 30). */
    skipped: number;
    failed: number;
    cancelled: number;
    running: number;
  };
}

export interface BatchDetail {
  readonly id: number;
  readonly runbookName: string;
  readonly runbookVersion: number;
  readonly status: BatchStatus;
  readonly isManual: boolean;
  readonly createdBy: string | null;
  readonly detectedAt: string;
  readonly batchStartTime: string | null;
  readonly currentPhase: string | null;
  readonly outcome: string | null;
  readonly succeededMembers: number | null;
  readonly failedMembers: number | null;
  /** Retention (issue 31): when the batch's personal data was purged, and how; null before. */
  readonly purgedAt?: string | null;
  readonly purgeMode?: "scrub" | "delete" | null;
  readonly memberCounts: Record<MemberStatus, number>;
  readonly phases: readonly PhaseSummary[];
}

export interface GridStep {
  readonly id: number;
  readonly phaseName: string;
  readonly stepName: string;
  readonly status: ExecutionStatus;
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
  readonly retryCount: number;
  readonly pollCount: number;
  readonly redriveCount: number;
  readonly completedAt: string | null;
  /** A for_each step (issue 30): its values for the member; absent from a server before it. */
  readonly itemCount?: number | null;
  readonly itemsDone?: number;
}

export interface GridMember {
  readonly id: number;
  readonly memberKey: string;
  readonly status: MemberStatus;
  readonly failedAt: string | null;
  readonly steps: readonly GridStep[];
}

export interface GridColumn {
  readonly phaseName: string;
  readonly stepName: string;
}

export interface GridPage {
  readonly batchId: number;
  readonly memberTotal: number;
  readonly offset: number;
  readonly columns: readonly GridColumn[];
  readonly members: readonly GridMember[];
}

export interface StatusEvent {
  readonly id: number;
  readonly entity: string;
  readonly entityId: number;
  readonly fromStatus: string | null;
  readonly toStatus: string;
  readonly reason: string | null;
  readonly actor: string | null;
  readonly at: string;
  /** The member of a member or step event (its key, as the grid shows it); else null. */
  readonly memberKey: string | null;
  /** The phase of a phase or step event; else null. */
  readonly phaseName: string | null;
  /** The runbook step of a step or init event; else null. */
  readonly stepName: string | null;
}

export interface EventPage {
  readonly items: readonly StatusEvent[];
  readonly nextAfterId: number | null;
}

export interface BatchProgress {
  readonly memberTotal: number;
  readonly points: readonly { at: string; succeeded: number; failed: number }[];
}

export const finalStatuses: readonly BatchStatus[] = ["completed", "failed", "cancelled"];
export const isFinal = (status: BatchStatus) => finalStatuses.includes(status);

export const getBatch = (id: number) => apiFetch<BatchDetail>(`/batches/${id}`);
export const getGridPage = (id: number, offset: number, limit: number, memberStatus?: string) =>
  apiFetch<GridPage>(
    `/batches/${id}/grid?offset=${offset}&limit=${limit}` +
      (memberStatus === undefined ? "" : `&memberStatus=${encodeURIComponent(memberStatus)}`),
  );
export const getEvents = (id: number, afterId: number, limit: number) =>
  apiFetch<EventPage>(`/batches/${id}/events?afterId=${afterId}&limit=${limit}`);
export const getProgress = (id: number) => apiFetch<BatchProgress>(`/batches/${id}/progress`);

/** The operator actions of a batch (POST /api/batches/{id}/…). */
export type BatchAction = "advance" | "pause" | "resume" | "redrive" | "cancel";

export async function runAction(id: number, action: BatchAction): Promise<unknown> {
  switch (action) {
    case "advance":
    case "pause":
    case "resume":
    case "cancel":
      return apiSend("POST", `/batches/${id}/${action}`);
    case "redrive":
      return apiSend("POST", `/batches/${id}/redrive`, { members: "failed" });
    default:
      return unreachable(action);
  }
}

/** A phase's go / no-go (issue 30): POST /api/batches/{id}/phases/{seq}/approve | reject. */
export type PhaseDecision = "approve" | "reject";

export const decidePhase = (batchId: number, sequence: number, decision: PhaseDecision) =>
  apiSend("POST", `/batches/${batchId}/phases/${sequence}/${decision}`);

/** "409 state.conflict: the batch is not active" — the status and stable code stay visible. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    return error.status === 0 ? error.message : `${error.message} (${error.status} ${error.code})`;
  }
  return error instanceof Error ? error.message : String(error);
}

export function unreachable(value: never): never {
  throw new Error(`Unexpected value ${JSON.stringify(value)}`);
}
