import type { Generated, Insertable, Selectable, Updateable } from "kysely";
import type { NullableTimestamp } from "./column-types.ts";

/** Per runbook name: whether the scheduler creates batches automatically. */
export interface RunbookAutomationSettingsTable {
  runbookName: string;
  automationEnabled: Generated<boolean>;
  enabledAt: NullableTimestamp;
  enabledBy: string | null;
  disabledAt: NullableTimestamp;
  disabledBy: string | null;
}

export type AutomationSettings = Selectable<RunbookAutomationSettingsTable>;
export type NewAutomationSettings = Insertable<RunbookAutomationSettingsTable>;
export type AutomationSettingsUpdate = Updateable<RunbookAutomationSettingsTable>;
