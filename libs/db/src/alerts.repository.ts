import { sql } from "kysely";
import type { Alert } from "./alerts.table.ts";
import type { Db } from "./connection.ts";
import { jsonb } from "./json.ts";

/**
 * The `alerts` table (migration 0020, issue 31). Raise and resolve are each one guarded
 * statement that says whether it changed anything: only the caller that raised (resolved) an
 * alert writes its event and queues its webhook notification, so two evaluators running at the
 * same time (or one re-evaluating) raise and resolve each occurrence exactly once.
 */

export interface AlertToRaise {
  readonly conditionId: string;
  readonly severity: "critical" | "warning";
  readonly subject: string;
  readonly runbookName: string | null;
  readonly batchId: number | null;
  readonly details: Record<string, unknown>;
}

/** The new row, or undefined when the (condition, subject) is already open. */
export async function raiseAlert(db: Db, alert: AlertToRaise, at: Date): Promise<Alert | undefined> {
  const result = await sql<Alert>`
    INSERT INTO alerts (condition_id, severity, subject, runbook_name, batch_id, details, raised_at)
    VALUES (${alert.conditionId}, ${alert.severity}, ${alert.subject}, ${alert.runbookName},
            ${alert.batchId}, ${jsonb(alert.details)}, ${at})
    ON CONFLICT (condition_id, subject) WHERE resolved_at IS NULL DO NOTHING
    RETURNING id, condition_id AS "conditionId", severity, subject, runbook_name AS "runbookName",
      batch_id AS "batchId", details, raised_at AS "raisedAt", resolved_at AS "resolvedAt"`.execute(db);
  return result.rows[0];
}

/** The resolved row, or undefined when it was resolved already. */
export async function resolveAlert(db: Db, id: number, at: Date): Promise<Alert | undefined> {
  return db
    .updateTable("alerts")
    .set({ resolvedAt: at })
    .where("id", "=", id)
    .where("resolvedAt", "is", null)
    .returningAll()
    .executeTakeFirst();
}

export async function listOpenAlerts(db: Db, conditionId?: string): Promise<Alert[]> {
  let query = db.selectFrom("alerts").selectAll().where("resolvedAt", "is", null);
  if (conditionId !== undefined) query = query.where("conditionId", "=", conditionId);
  return query.orderBy("id").execute();
}

/** Newest first: open ones, or every one (`all`), at most `limit`. */
export async function listAlerts(
  db: Db,
  options: { readonly state: "open" | "all"; readonly limit: number },
): Promise<Alert[]> {
  let query = db.selectFrom("alerts").selectAll();
  if (options.state === "open") query = query.where("resolvedAt", "is", null);
  return query.orderBy("id", "desc").limit(options.limit).execute();
}

/** Open alerts per condition, for `matoolkit_alerts_open` (read at scrape time). */
export async function countOpenAlerts(
  db: Db,
): Promise<{ readonly conditionId: string; readonly severity: string; readonly open: number }[]> {
  const rows = await db
    .selectFrom("alerts")
    .select(["conditionId", "severity", (eb) => eb.fn.countAll<string>().as("open")])
    .where("resolvedAt", "is", null)
    .groupBy(["conditionId", "severity"])
    .execute();
  return rows.map((row) => ({
    conditionId: row.conditionId,
    severity: row.severity,
    open: Number(row.open),
  }));
}

/** The alert's timeline row: created `open`, then `open` → `resolved`; reason = the condition id. */
export async function appendAlertEvent(
  db: Db,
  alert: Alert,
  change: { readonly from: "open" | null; readonly to: "open" | "resolved"; readonly at: Date },
): Promise<number> {
  const row = await db
    .insertInto("events")
    .values({
      batchId: alert.batchId,
      entity: "alert",
      entityId: alert.id,
      fromStatus: change.from,
      toStatus: change.to,
      reason: alert.conditionId,
      at: change.at,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}
