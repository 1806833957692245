import type { AutomationSettings } from "./automation-settings.table.ts";
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
