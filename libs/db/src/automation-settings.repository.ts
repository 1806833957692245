import { sql } from "kysely";
import type { AutomationSettings } from "./automation-settings.table.ts";
import { camelCaseRows } from "./camel-case.ts";
import type { Db } from "./connection.ts";

/** Undefined when automation was never configured for the runbook (i.e. disabled). */
export async function getAutomationSettings(
  db: Db,
  runbookName: string,
): Promise<AutomationSettings | undefined> {
  return db
    .selectFrom("runbookAutomationSettings")
    .selectAll()
    .where("runbookName", "=", runbookName)
    .executeTakeFirst();
}

export interface SetAutomationInput {
  readonly runbookName: string;
  readonly enabled: boolean;
  /** Who switched it (000 "Audit Trail": enabled_by / disabled_by). */
  readonly actor: string;
  readonly at: Date;
}

/**
 * Switches automation on or off for a runbook name. Who and when are recorded only when the
 * switch actually changes (or is set for the first time): repeating "enable" keeps the record of
 * who enabled it, and the other pair (disabled_* when enabling) keeps the previous toggle.
 */
export async function setAutomationEnabled(db: Db, input: SetAutomationInput): Promise<AutomationSettings> {
  const { runbookName, enabled, actor, at } = input;
  const result = await sql<Record<string, unknown>>`
    INSERT INTO runbook_automation_settings AS current
      (runbook_name, automation_enabled, enabled_at, enabled_by, disabled_at, disabled_by)
    VALUES (
      ${runbookName}, ${enabled},
      ${enabled ? at : null}, ${enabled ? actor : null},
      ${enabled ? null : at}, ${enabled ? null : actor}
    )
    ON CONFLICT (runbook_name) DO UPDATE SET
      automation_enabled = excluded.automation_enabled,
      enabled_at = CASE WHEN excluded.automation_enabled AND NOT current.automation_enabled
        THEN excluded.enabled_at ELSE current.enabled_at END,
      enabled_by = CASE WHEN excluded.automation_enabled AND NOT current.automation_enabled
        THEN excluded.enabled_by ELSE current.enabled_by END,
      disabled_at = CASE WHEN NOT excluded.automation_enabled AND current.automation_enabled
        THEN excluded.disabled_at ELSE current.disabled_at END,
      disabled_by = CASE WHEN NOT excluded.automation_enabled AND current.automation_enabled
        THEN excluded.disabled_by ELSE current.disabled_by END
    RETURNING *
  `.execute(db);
  const [settings] = camelCaseRows<AutomationSettings>(result.rows);
  if (settings === undefined) throw new Error("upsert into runbook_automation_settings returned no row");
  return settings;
}

/** First key of the two-key advisory lock: keeps these locks apart from the publish locks. */
const AUTOMATION_LOCK_NAMESPACE = 0x6d61_6175; // "maau"

/**
 * For a switch that records what it changed (the audit event's from/to): serialises switches of
 * one runbook name until the caller's transaction ends, then reads the committed settings. A
 * transaction-scoped advisory lock, because the row may not exist yet (never configured).
 */
export async function lockAutomationSettings(
  trx: Db,
  runbookName: string,
): Promise<AutomationSettings | undefined> {
  await sql`SELECT pg_advisory_xact_lock(${AUTOMATION_LOCK_NAMESPACE}::int, hashtext(${runbookName}::text))`.execute(
    trx,
  );
  return getAutomationSettings(trx, runbookName);
}
