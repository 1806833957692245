import type { Kysely, Migration } from "kysely";
import { createBatchTables } from "./0001_initial/batch-tables.ts";
import { createExecutionTables } from "./0001_initial/execution-tables.ts";
import { createInfrastructureTables } from "./0001_initial/infrastructure-tables.ts";
import { createRunbookTables } from "./0001_initial/runbook-tables.ts";

/** The whole schema of 000 "SQL Schema", plus the audit timeline, outbox and idempotency keys. */
export const initialMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await createRunbookTables(db);
    await createBatchTables(db);
    await createExecutionTables(db);
    await createInfrastructureTables(db);
  },
  async down(db: Kysely<unknown>) {
    // Children before parents, so foreign keys never block a drop.
    for (const table of [
      "idempotency_keys",
      "outbox",
      "events",
      "init_executions",
      "step_executions",
      "phase_executions",
      "batch_members",
      "batches",
      "runbook_automation_settings",
      "runbooks",
    ]) {
      await db.schema.dropTable(table).ifExists().execute();
    }
  },
};
