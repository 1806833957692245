import { claimNotificationEmail, recordNotificationEmail, type Db } from "@matoolkit/db";
import { emailNotificationTypes, MatoolkitError, type EventNotification } from "@matoolkit/domain";
import type { Logger } from "@matoolkit/runtime";
import { emailMessageFor } from "./email-message.ts";

/**
 * Email notifications (issue 31 item 7, MATOOLKIT_NOTIFY_EMAIL): a batch's end and an approval
 * request are mailed to the batch's initiator (when `createdBy` looks like an address) and the
 * configured list, through Microsoft Graph sendMail as the configured mailbox
 * (https://learn.microsoft.com/en-us/graph/api/user-sendmail, application permission Mail.Send,
 * 202 Accepted) with the target tenant's credentials.
 *
 * Once per notification, recorded (notification_emails): the row is claimed before the send, so a
 * redelivered notification or a second orchestrator mails nothing twice; a failure is recorded and
 * logged (reason code, never an address) and not retried: unlike a webhook, a missed email has
 * the batch's own view and the webhooks as a fallback, and a retried sendMail that did go through
 * would mail everyone twice.
 */

/** The worker's Graph client port (services/worker/src/tenant/graph-client.ts), what sendMail needs of it. */
export interface GraphMailClient {
  request<T = unknown>(
    request: { method: "POST"; path: string; body: unknown },
    signal: AbortSignal,
  ): Promise<T>;
}

export interface EmailNotifier {
  readonly from: string;
  readonly to: readonly string[];
  readonly graph: GraphMailClient;
  readonly timeoutMs?: number;
}

const emailable: ReadonlySet<string> = new Set(emailNotificationTypes);
const addressLike = /^[^@\s,;<>]+@[^@\s,;<>]+\.[^@\s,;<>]+$/u;

/** The initiator when it looks like an address, then the list, each address once (case-insensitive). */
export function emailRecipients(
  createdBy: string | null | undefined,
  configured: readonly string[],
): string[] {
  const all = [...(createdBy != null && addressLike.test(createdBy) ? [createdBy] : []), ...configured];
  const seen = new Set<string>();
  return all.filter((address) => {
    const key = address.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export async function mailNotification(
  scope: { readonly db: Db; readonly logger: Logger; readonly now: () => Date; readonly signal: AbortSignal },
  mailer: EmailNotifier,
  notification: EventNotification,
): Promise<void> {
  if (!emailable.has(notification.type) || !("batch" in notification)) return;
  const message = emailMessageFor(notification);
  const to = emailRecipients(notification.batch.createdBy, mailer.to);
  if (message === undefined || to.length === 0) return;
  const claimed = await claimNotificationEmail(scope.db, {
    notificationId: notification.id,
    event: notification.type,
    batchId: notification.batch.id,
    recipients: to.length,
  });
  if (!claimed) return;
  const fields = { notificationId: notification.id, event: notification.type, recipients: to.length };
  let errorCode: string | null = null;
  try {
    await mailer.graph.request(
      {
        method: "POST",
        path: `/users/${encodeURIComponent(mailer.from)}/sendMail`,
        body: {
          message: {
            subject: message.subject,
            body: { contentType: "Text", content: message.content },
            toRecipients: to.map((address) => ({ emailAddress: { address } })),
          },
          saveToSentItems: false,
        },
      },
      AbortSignal.any([scope.signal, AbortSignal.timeout(mailer.timeoutMs ?? 10_000)]),
    );
  } catch (error) {
    errorCode = error instanceof MatoolkitError ? error.reason : "email.unreachable";
  }
  await recordNotificationEmail(scope.db, {
    notificationId: notification.id,
    sent: errorCode === null,
    httpStatus: errorCode === null ? 202 : null,
    errorCode,
    at: scope.now(),
  });
  if (errorCode === null) scope.logger.info(fields, "notification email sent");
  else scope.logger.error({ ...fields, reason: errorCode }, "notification email failed; not retried");
}
