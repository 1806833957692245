import type { Command } from "commander";
import { z } from "zod";
import { apiPath } from "../http/api-client.ts";
import { action, type CommandRuntime } from "./action.ts";
import { positiveId, wholeNumber } from "./arguments.ts";
import { eventColumns } from "./batch.views.ts";
import { eventView, readAs, type EventView } from "./views.ts";

const auditPageView = z.array(eventView.extend({ batchId: z.number().nullable() }));

/** `matoolkit audit`: who did what through the API (GET /api/audit), oldest first. */
export function registerAuditCommands(program: Command, runtime: CommandRuntime): void {
  program
    .command("audit")
    .description("the audit trail: every write made through the API, with who made it, oldest first")
    .option("--after-id <id>", "only entries after this id (the last one you saw)", wholeNumber)
    .option("--limit <n>", "at most this many (1-1000, default 100)", positiveId)
    .option("--actor <identity>", "only this caller's writes (their sign-in name)")
    .option("--batch <id>", "only writes to this batch", positiveId)
    .action(
      action(
        runtime,
        async (session, options: { afterId?: number; limit?: number; actor?: string; batch?: number }) => {
          const page = await session.api().json("GET", apiPath("audit"), {
            query: {
              afterId: options.afterId,
              limit: options.limit,
              actor: options.actor,
              batchId: options.batch,
            },
          });
          session.output.result(page, (value) => {
            const entries = readAs(auditPageView, value, "audit page");
            const columns = [
              ...eventColumns.filter((column) => column.header !== "ACTOR"),
              { header: "BATCH", value: (e: EventView & { batchId: number | null }) => e.batchId },
              { header: "ACTOR", value: (e: EventView) => e.actor },
            ];
            session.output.table(entries, columns, "No audit entries.");
            // A full page: there may be more (the API's Link header says so; the next page starts
            // after the last id shown).
            if (entries.length === (options.limit ?? 100)) {
              session.output.line(`More: matoolkit audit --after-id ${entries.at(-1)!.id}`);
            }
          });
        },
      ),
    );
}
