import type { GeneratedAlways, Selectable } from "kysely";
import type { CreatedAt, JsonColumnWithDefault, NullableTimestamp } from "./column-types.ts";

/** One occurrence of an alert condition on a subject (migration 0020, issue 31). */
export interface AlertsTable {
  id: GeneratedAlways<number>;
  /** libs/domain alertConditionIds. */
  conditionId: string;
  severity: "critical" | "warning";
  /** What it is about: `runbook:<name>`, `batch:<id>`, `phase:<id>`, `pool:<workerId>`, `subscription:<topic>/<name>`. */
  subject: string;
  /** The runbook it belongs to, when it has one: webhooks of that runbook receive it too. */
  runbookName: string | null;
  batchId: number | null;
  /** Counts, reason codes and thresholds only; never member data. */
  details: JsonColumnWithDefault<Record<string, unknown>>;
  raisedAt: CreatedAt;
  resolvedAt: NullableTimestamp;
}

export type Alert = Selectable<AlertsTable>;
