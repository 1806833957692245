import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { jsonb } from "./json.ts";
import type {
  DeliveryAttempt,
  DeliveryStatus,
  NotificationDelivery,
} from "./notification-deliveries.table.ts";

export interface NewDeliveryInput {
  readonly webhookId: number;
  readonly notificationId: string;
  readonly event: string;
  readonly payload: unknown;
}

/**
 * Creates the deliveries of one notification (one per webhook), in one statement. A delivery that
 * already exists for (webhook, notification) is skipped, so a notification handled twice creates
 * nothing twice; only the rows actually created are returned (they are the ones to send).
 */
export async function insertDeliveries(
  db: Db,
  rows: readonly NewDeliveryInput[],
): Promise<NotificationDelivery[]> {
  if (rows.length === 0) return [];
  return db
    .insertInto("notificationDeliveries")
    .values(
      rows.map((row) => ({
        webhookId: row.webhookId,
        notificationId: row.notificationId,
        event: row.event,
        payload: jsonb(row.payload),
      })),
    )
    .onConflict((conflict) => conflict.columns(["webhookId", "notificationId"]).doNothing())
    .returningAll()
    .execute();
}

export async function getDelivery(db: Db, id: number): Promise<NotificationDelivery | undefined> {
  return db.selectFrom("notificationDeliveries").selectAll().where("id", "=", id).executeTakeFirst();
}

export interface AttemptRecord {
  readonly id: number;
  /** The attempt just made (1-based); the row must have made exactly `attempt - 1` so far. */
  readonly attempt: number;
  readonly status: Exclude<DeliveryStatus, "pending">;
  readonly httpStatus: number | null;
  readonly errorCode: string | null;
  readonly at: Date;
  readonly durationMs: number;
  /** When status is `failed`: when the next attempt goes out. */
  readonly nextAttemptAt: Date | null;
}

/**
 * Records an attempt, guarded: only if the delivery is still open (pending or failed) and has
 * made exactly `attempt - 1` attempts. Two copies of one attempt (a redelivered message) both
 * POST, but only the first records, and only its caller schedules the next attempt; undefined
 * tells the other it lost.
 */
export async function recordDeliveryAttempt(
  db: Db,
  record: AttemptRecord,
): Promise<NotificationDelivery | undefined> {
  const entry: DeliveryAttempt = {
    attempt: record.attempt,
    at: record.at.toISOString(),
    httpStatus: record.httpStatus,
    errorCode: record.errorCode,
    durationMs: record.durationMs,
  };
  const finished = record.status === "failed" ? null : record.at;
  return db
    .updateTable("notificationDeliveries")
    .set({
      status: record.status,
      attempt: record.attempt,
      attempts: sql`attempts || ${jsonb([entry])}`,
      httpStatus: record.httpStatus,
      errorCode: record.errorCode,
      nextAttemptAt: record.nextAttemptAt,
      finishedAt: finished,
    })
    .where("id", "=", record.id)
    .where("status", "in", ["pending", "failed"])
    .where("attempt", "=", record.attempt - 1)
    .returningAll()
    .executeTakeFirst();
}

/** A webhook's deliveries after `afterId`, oldest first; one more than `limit` tells a next page exists. */
export async function listDeliveries(
  db: Db,
  webhookId: number,
  page: { readonly afterId?: number | undefined; readonly limit: number },
): Promise<NotificationDelivery[]> {
  let query = db.selectFrom("notificationDeliveries").selectAll().where("webhookId", "=", webhookId);
  if (page.afterId !== undefined) query = query.where("id", ">", page.afterId);
  return query.orderBy("id").limit(page.limit).execute();
}
