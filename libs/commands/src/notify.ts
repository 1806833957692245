import { enqueueOutbox, getBatchRef, hasSubscribedWebhook, lastEventIdOf, type Db } from "@matoolkit/db";
import {
  emailNotificationTypes,
  NOTIFICATION_SCHEMA_VERSION,
  notificationEnvelope,
  notificationIdFor,
  type EventNotification,
  type NotificationType,
  type Outcome,
  type PhaseApprovalType,
} from "@matoolkit/domain";

/**
 * Queues webhook notifications (issue 12) in the caller's transaction, the one that made the
 * change they report: committed together (the notification goes out iff the change happened, and
 * only the transition's winner gets here), through the outbox like every other message.
 * Nothing is queued when no enabled webhook takes the event (one indexed probe), except the
 * events the optional email notifier may mail (issue 31 item 7: a batch's end, an approval
 * request): those are queued always, one message per batch end or gate, because whether email is
 * on is the orchestrator's configuration, not known to every process that queues them.
 */

export interface BatchRef {
  readonly id: number;
  readonly runbookName: string;
  readonly runbookVersion: number;
  /** The batch's change ticket / request id (issue 31); null when none. */
  readonly externalRef: string | null;
  /** Who created the batch (batches.created_by, issue 31 item 7); null: the scheduler did. */
  readonly createdBy: string | null;
}

export interface EndCounts {
  readonly succeededMembers: number;
  readonly failedMembers: number;
}

/** phase.completed / phase.failed, just after the phase's terminal transition. */
export async function notifyPhaseEnded(
  trx: Db,
  args: {
    phase: { id: number; phaseName: string; runbookVersion: number; status: "completed" | "failed" };
    batchId: number;
    outcome: Outcome;
    counts: EndCounts;
    at: Date;
  },
): Promise<void> {
  const type: NotificationType = args.phase.status === "completed" ? "phase.completed" : "phase.failed";
  const batch = await subscribedBatch(trx, args.batchId, type);
  if (batch === undefined) return;
  const eventId = await lastEventIdOf(trx, batch.id, "phase", args.phase.id);
  await enqueue(trx, {
    schemaVersion: NOTIFICATION_SCHEMA_VERSION,
    id: notificationIdFor(type, args.phase.id, eventId),
    type,
    occurredAt: args.at.toISOString(),
    batch,
    phase: { id: args.phase.id, name: args.phase.phaseName, runbookVersion: args.phase.runbookVersion },
    outcome: args.outcome,
    counts: args.counts,
  });
}

/** batch.completed / batch.failed, just after the batch's terminal transition. */
export async function notifyBatchEnded(
  trx: Db,
  args: { batchId: number; status: "completed" | "failed"; outcome: Outcome; counts: EndCounts; at: Date },
): Promise<void> {
  const type: NotificationType = args.status === "completed" ? "batch.completed" : "batch.failed";
  const batch = await subscribedBatch(trx, args.batchId, type);
  if (batch === undefined) return;
  const eventId = await lastEventIdOf(trx, batch.id, "batch", batch.id);
  await enqueue(trx, {
    schemaVersion: NOTIFICATION_SCHEMA_VERSION,
    id: notificationIdFor(type, batch.id, eventId),
    type,
    occurredAt: args.at.toISOString(),
    batch,
    outcome: args.outcome,
    counts: args.counts,
  });
}

/**
 * phase.awaiting_approval / phase.approved / phase.rejected (issue 30), just after the gate's
 * transition. Who decided is `operator` or `timeout`; the operator's identity stays in the audit.
 */
export async function notifyPhaseApproval(
  trx: Db,
  args: {
    type: PhaseApprovalType;
    phase: {
      id: number;
      phaseName: string;
      runbookVersion: number;
      approvalExpiresAt: Date | null;
      approvalTimeoutOutcome: "approve" | "reject" | null;
    };
    batchId: number;
    decidedBy: "operator" | "timeout" | null;
    at: Date;
  },
): Promise<void> {
  const batch = await subscribedBatch(trx, args.batchId, args.type);
  if (batch === undefined) return;
  const eventId = await lastEventIdOf(trx, batch.id, "phase", args.phase.id);
  await enqueue(trx, {
    schemaVersion: NOTIFICATION_SCHEMA_VERSION,
    id: notificationIdFor(args.type, args.phase.id, eventId),
    type: args.type,
    occurredAt: args.at.toISOString(),
    batch,
    phase: { id: args.phase.id, name: args.phase.phaseName, runbookVersion: args.phase.runbookVersion },
    approval: {
      expiresAt: args.phase.approvalExpiresAt?.toISOString() ?? null,
      timeoutOutcome: args.phase.approvalTimeoutOutcome,
      decidedBy: args.decidedBy,
    },
  });
}

/**
 * member.failed, just after the member's `fail` transition. Ids, the step's name and its reason
 * code only: the member's key and data are PII and never leave in a notification.
 */
export async function notifyMemberFailed(
  trx: Db,
  args: {
    batchId: number;
    memberId: number;
    stepName: string | null;
    errorCode: string | null;
    at: Date;
  },
): Promise<void> {
  const batch = await subscribedBatch(trx, args.batchId, "member.failed");
  if (batch === undefined) return;
  const eventId = await lastEventIdOf(trx, batch.id, "member", args.memberId);
  await enqueue(trx, {
    schemaVersion: NOTIFICATION_SCHEMA_VERSION,
    id: notificationIdFor("member.failed", args.memberId, eventId),
    type: "member.failed",
    occurredAt: args.at.toISOString(),
    batch,
    member: { id: args.memberId, stepName: args.stepName, errorCode: args.errorCode },
  });
}

const mailableTypes: ReadonlySet<NotificationType> = new Set(emailNotificationTypes);

async function subscribedBatch(
  trx: Db,
  batchId: number,
  type: NotificationType,
): Promise<BatchRef | undefined> {
  const batch = await getBatchRef(trx, batchId);
  if (batch === undefined) return undefined;
  if (mailableTypes.has(type)) return batch;
  return (await hasSubscribedWebhook(trx, batch.runbookName, type)) ? batch : undefined;
}

async function enqueue(trx: Db, payload: EventNotification): Promise<void> {
  await enqueueOutbox(trx, [notificationEnvelope(payload)]);
}
