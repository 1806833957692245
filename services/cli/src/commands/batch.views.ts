import { itemLabel } from "@matoolkit/domain";
import { eventSubject } from "./event-subject.ts";
import { z } from "zod";
import type { Output } from "../output/output.ts";
import {
  batchDetailView,
  eventsPageView,
  memberView,
  phaseView,
  readAs,
  stepsView,
  type EventView,
  type MemberCountsView,
} from "./views.ts";

/**
 * "2/3 succeeded, 0 failed, 0 cancelled, 1 running": a phase's members out of those with steps
 * in it; before the phase is dispatched none has any. Members its `when:` skipped entirely are
 * named when there are any ("1/3 succeeded, 1 skipped, …", issue 30).
 */
export function formatMemberCounts(counts: MemberCountsView): string {
  const total = phaseTotal(counts);
  if (total === 0) return "no members started";
  const skipped = counts.skipped > 0 ? `, ${counts.skipped} skipped` : "";
  return `${counts.succeeded}/${total} succeeded${skipped}, ${counts.failed} failed, ${counts.cancelled} cancelled, ${counts.running} running`;
}

/**
 * "partially_succeeded (2 succeeded, 1 failed)" once a batch or phase has ended (issue 12);
 * nothing while it runs, when cancelled, or from a server without outcomes.
 */
export function formatOutcome(row: {
  readonly outcome?: string | null | undefined;
  readonly succeededMembers?: number | null | undefined;
  readonly failedMembers?: number | null | undefined;
}): string | null {
  if (row.outcome === null || row.outcome === undefined) return null;
  if (row.succeededMembers === null || row.succeededMembers === undefined) return row.outcome;
  return `${row.outcome} (${row.succeededMembers} succeeded, ${row.failedMembers ?? 0} failed)`;
}

/** "3 active, 1 failed": the member statuses that have members. */
export function formatBatchMembers(counts: Readonly<Record<string, number>>): string {
  const present = Object.entries(counts).filter(([, count]) => count > 0);
  return present.length === 0 ? "none" : present.map(([status, count]) => `${count} ${status}`).join(", ");
}

export function phaseTotal(counts: MemberCountsView): number {
  return counts.succeeded + counts.skipped + counts.failed + counts.cancelled + counts.running;
}

export function printBatchDetail(output: Output, value: unknown): void {
  const b = readAs(batchDetailView, value, "batch");
  output.fields([
    ["Batch", b.id],
    ["Runbook", `${b.runbookName} v${b.runbookVersion}`],
    ["Status", b.status],
    ["Outcome", formatOutcome(b)],
    ["Manual", b.isManual],
    ["Start", b.batchStartTime],
    ["Detected", b.detectedAt],
    ["Created by", b.createdBy],
    ["Current phase", b.currentPhase],
    ["Members", formatBatchMembers(b.memberCounts)],
    // Said, not left to empty data: the retention purge removed it (docs/operating-batches.md).
    ...(b.purgedAt == null
      ? []
      : [["Personal data", `purged on ${b.purgedAt} (${b.purgeMode ?? "scrub"})`] as const]),
  ]);
  output.line();
  output.table(
    b.phases,
    [
      { header: "SEQ", value: (p) => p.sequence, align: "right" },
      { header: "PHASE", value: (p) => p.phaseName },
      { header: "STATUS", value: (p) => p.status },
      { header: "OUTCOME", value: (p) => p.outcome },
      { header: "DUE", value: (p) => p.dueAt },
      ...approvalColumn(b.phases),
      { header: "MEMBERS", value: (p) => formatMemberCounts(p.memberCounts) },
    ],
    "No phases.",
  );
}

export function printMembers(output: Output, value: unknown): void {
  output.table(
    readAs(z.array(memberView), value, "member list"),
    [
      { header: "ID", value: (m) => m.id, align: "right" },
      { header: "MEMBER KEY", value: (m) => m.memberKey, shrink: true },
      { header: "STATUS", value: (m) => m.status },
      { header: "ADDED", value: (m) => m.addedAt },
      { header: "FAILED", value: (m) => m.failedAt },
      { header: "REMOVED", value: (m) => m.removedAt },
    ],
    "No members.",
  );
}

type ApprovalFields = Parameters<typeof formatApproval>[0];

/** The APPROVAL column, only for a batch with a gated phase: other batches' tables stay as they were. */
function approvalColumn<P extends ApprovalFields>(phases: readonly P[]) {
  if (!phases.some((phase) => phase.approvalRequired === true)) return [];
  return [{ header: "APPROVAL", value: (phase: P) => formatApproval(phase) }];
}

/** `required`, `awaiting until <time>`, `approved`, `rejected`; empty for a phase without a gate. */
export function formatApproval(phase: {
  readonly status: string;
  readonly approvalRequired?: boolean | undefined;
  readonly approvalExpiresAt?: string | null | undefined;
  readonly approvalDecision?: string | null | undefined;
}): string | null {
  if (phase.approvalRequired !== true) return null;
  if (phase.approvalDecision !== null && phase.approvalDecision !== undefined) return phase.approvalDecision;
  if (phase.status !== "awaiting_approval") return "required";
  return phase.approvalExpiresAt === null || phase.approvalExpiresAt === undefined
    ? "awaiting"
    : `awaiting until ${phase.approvalExpiresAt}`;
}

export function printPhases(output: Output, value: unknown): void {
  const phases = readAs(z.array(phaseView), value, "phase list");
  output.table(
    phases,
    [
      { header: "ID", value: (p) => p.id, align: "right" },
      { header: "SEQ", value: (p) => p.sequence, align: "right" },
      { header: "PHASE", value: (p) => p.phaseName },
      { header: "VERSION", value: (p) => p.runbookVersion, align: "right" },
      { header: "STATUS", value: (p) => p.status },
      { header: "OUTCOME", value: (p) => p.outcome },
      { header: "DUE", value: (p) => p.dueAt },
      ...approvalColumn(phases),
      { header: "DISPATCHED", value: (p) => p.dispatchedAt },
      { header: "COMPLETED", value: (p) => p.completedAt },
      { header: "SUCCEEDED", value: (p) => p.memberCounts.succeeded, align: "right" },
      { header: "SKIPPED", value: (p) => p.memberCounts.skipped, align: "right" },
      { header: "FAILED", value: (p) => p.memberCounts.failed, align: "right" },
      { header: "CANCELLED", value: (p) => p.memberCounts.cancelled, align: "right" },
      { header: "RUNNING", value: (p) => p.memberCounts.running, align: "right" },
    ],
    "No phases.",
  );
}

export function printSteps(output: Output, value: unknown): void {
  const { init, steps } = readAs(stepsView, value, "step list");
  const error = (row: { errorCode: string | null; errorMessage: string | null }) =>
    row.errorCode === null ? row.errorMessage : `${row.errorCode}: ${row.errorMessage ?? ""}`;
  output.line("Init steps:");
  output.table(
    init,
    [
      { header: "ID", value: (s) => s.id, align: "right" },
      { header: "STEP", value: (s) => s.stepName },
      { header: "FUNCTION", value: (s) => s.functionName },
      { header: "STATUS", value: (s) => s.status },
      { header: "RETRIES", value: (s) => s.retryCount, align: "right" },
      { header: "ROLLBACK", value: (s) => s.rollback?.name },
      { header: "ERROR", value: error, shrink: true },
    ],
    "(none)",
  );
  output.line();
  output.line("Steps:");
  output.table(
    steps,
    [
      { header: "ID", value: (s) => s.id, align: "right" },
      { header: "PHASE EXEC", value: (s) => s.phaseExecutionId, align: "right" },
      { header: "MEMBER", value: (s) => s.batchMemberId, align: "right" },
      { header: "#", value: (s) => s.stepIndex, align: "right" },
      { header: "STEP", value: (s) => itemLabel(s.stepName, s) },
      { header: "FUNCTION", value: (s) => s.functionName },
      { header: "STATUS", value: (s) => s.status },
      { header: "RETRIES", value: (s) => s.retryCount, align: "right" },
      { header: "ROLLBACK", value: (s) => s.rollback?.name },
      { header: "ERROR", value: error, shrink: true },
    ],
    "(none)",
  );
}

export const eventColumns = [
  { header: "ID", value: (e: EventView) => e.id, align: "right" as const },
  { header: "AT", value: (e: EventView) => e.at },
  { header: "ENTITY", value: (e: EventView) => eventSubject(e, { withId: true }) },
  { header: "FROM", value: (e: EventView) => e.fromStatus },
  { header: "TO", value: (e: EventView) => e.toStatus },
  { header: "ACTOR", value: (e: EventView) => e.actor },
  { header: "REASON", value: (e: EventView) => e.reason, shrink: true },
];

export function printEvents(output: Output, batchId: number, value: unknown): void {
  const page = readAs(eventsPageView, value, "event page");
  output.table(page.items, eventColumns, "No events.");
  if (page.nextAfterId !== null) {
    output.line(`More: matoolkit batch events ${batchId} --after-id ${page.nextAfterId}`);
  }
}
