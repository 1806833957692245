import type { Db } from "./connection.ts";
import type { NotificationEmail } from "./notification-emails.table.ts";

/**
 * Claims a notification's email before it is sent: true for the one caller that inserted the row,
 * false when it was already claimed (a redelivered notification, another orchestrator). At most
 * once, by design: a crash between claim and send loses that email, never doubles it.
 */
export async function claimNotificationEmail(
  db: Db,
  claim: { notificationId: string; event: string; batchId: number | null; recipients: number },
): Promise<boolean> {
  const inserted = await db
    .insertInto("notificationEmails")
    .values(claim)
    .onConflict((conflict) => conflict.column("notificationId").doNothing())
    .returning("notificationId")
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function recordNotificationEmail(
  db: Db,
  result: {
    notificationId: string;
    sent: boolean;
    httpStatus: number | null;
    errorCode: string | null;
    at: Date;
  },
): Promise<void> {
  await db
    .updateTable("notificationEmails")
    .set({
      status: result.sent ? "sent" : "failed",
      httpStatus: result.httpStatus,
      errorCode: result.errorCode,
      finishedAt: result.at,
    })
    .where("notificationId", "=", result.notificationId)
    .execute();
}

export async function getNotificationEmail(
  db: Db,
  notificationId: string,
): Promise<NotificationEmail | undefined> {
  return db
    .selectFrom("notificationEmails")
    .selectAll()
    .where("notificationId", "=", notificationId)
    .executeTakeFirst();
}
