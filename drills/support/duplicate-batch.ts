import type { Db } from "@matoolkit/db";
import { seedAutomatedBatch } from "../../services/all-in-one/test/test-support.ts";

/** The duplicate-delivery drill's runbook: one phase of `steps` steps of `Drill-Effect`. */
export function duplicateRunbook(name: string, steps: readonly string[]): string {
  return [
    `name: ${name}`,
    "data_source:",
    "  type: csv",
    "  path: members.csv",
    "  primary_key: Upn",
    "  batch_time_column: StartsAt",
    "phases:",
    "  - name: go",
    "    offset: T-0",
    "    steps:",
    ...steps.flatMap((step) => [
      `      - name: ${step}`,
      "        worker_id: worker-01",
      "        function: Drill-Effect",
      "        params:",
      '          Member: "{{Upn}}"',
      `          Step: ${step}`,
    ]),
    "",
  ].join("\n");
}

/**
 * A batch due now, as the scheduler would create it (detected, phases with due_at), handed to
 * its workflow with a nudge: the drill runs no scheduler and no API, only the services that
 * exchange messages. The suite's own seeding, with the start time set to now.
 */
export function seedDueBatch(
  db: Db,
  args: { name: string; yaml: string; memberKeys: readonly string[] },
): Promise<number> {
  return seedAutomatedBatch(db, { ...args, startsAt: new Date() });
}
