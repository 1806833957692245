import type { EventNotification } from "@matoolkit/domain";

/**
 * The email of one notification (issue 31 item 7): ids, the runbook, the outcome and counts, and
 * where to look; never member data (keys, UPNs, data columns) nor anything secret. Plain text.
 */
export interface EmailMessage {
  readonly subject: string;
  readonly content: string;
}

export function emailMessageFor(notification: EventNotification): EmailMessage | undefined {
  if (!("batch" in notification)) return undefined;
  const { batch } = notification;
  const runbook = `${batch.runbookName} v${batch.runbookVersion}`;
  const where = [
    `Details: matoolkit batch show ${batch.id}`,
    `(admin API: GET /api/batches/${batch.id}, dashboard: #/batches/${batch.id})`,
  ];
  switch (notification.type) {
    case "batch.completed":
    case "batch.failed": {
      const ended = notification.type === "batch.completed" ? "completed" : "failed";
      return {
        subject: `[matoolkit] Batch ${batch.id} (${batch.runbookName}) ${ended}: ${notification.outcome}`,
        content: [
          `Batch ${batch.id} of runbook ${runbook} ${ended} at ${notification.occurredAt}.`,
          `Outcome: ${notification.outcome}`,
          `Members succeeded: ${notification.counts.succeededMembers}`,
          `Members failed: ${notification.counts.failedMembers}`,
          "",
          ...where,
        ].join("\n"),
      };
    }
    case "phase.awaiting_approval": {
      const { approval, phase } = notification;
      const timeout =
        approval.expiresAt === null
          ? "It waits until an operator decides."
          : `Without a decision it is ${approval.timeoutOutcome === "approve" ? "approved" : "rejected"} at ${approval.expiresAt}.`;
      return {
        subject: `[matoolkit] Approval needed: batch ${batch.id} (${batch.runbookName}), phase ${phase.name}`,
        content: [
          `Phase ${phase.name} (id ${phase.id}) of batch ${batch.id}, runbook ${runbook}, awaits approval.`,
          timeout,
          `Approve or reject: matoolkit phase approve|reject ${batch.id} <phase sequence>`,
          "",
          ...where,
        ].join("\n"),
      };
    }
    default:
      return undefined;
  }
}
