import type { Generated, Insertable, Selectable, Updateable, GeneratedAlways } from "kysely";
import type { CreatedAt, NullableTimestamp } from "./column-types.ts";

/** How past-due phases are handled when a new runbook version takes over (000 "Version Transition"). */
export type OverdueBehavior = "rerun" | "ignore";

/** One published version of a runbook; at most one version per name is active. */
export interface RunbooksTable {
  id: GeneratedAlways<number>;
  name: string;
  version: number;
  yamlContent: string;
  /** Vestigial (000 "SQL Schema"): stored on publish, unused at runtime. */
  dataTableName: string | null;
  isActive: Generated<boolean>;
  overdueBehavior: Generated<OverdueBehavior>;
  ignoreOverdueApplied: Generated<boolean>;
  rerunInit: Generated<boolean>;
  createdAt: CreatedAt;
  /** Last processing error the scheduler hit for this runbook (a reason code, never PII). */
  lastError: string | null;
  lastErrorAt: NullableTimestamp;
  /** Failed ticks since the last good one (migration 0020; the `source-failing` alert). */
  consecutiveFailures: Generated<number>;
}

export type Runbook = Selectable<RunbooksTable>;
export type NewRunbook = Insertable<RunbooksTable>;
export type RunbookUpdate = Updateable<RunbooksTable>;
