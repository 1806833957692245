import type { Command } from "commander";
import { z } from "zod";
import { apiPath } from "../http/api-client.ts";
import { action, type CommandRuntime } from "./action.ts";
import { positiveId } from "./arguments.ts";
import { readAs } from "./views.ts";

const alertsView = z.array(
  z.object({
    id: z.number(),
    condition: z.string(),
    severity: z.string(),
    summary: z.string(),
    subject: z.string(),
    raisedAt: z.string(),
    resolvedAt: z.string().nullable(),
  }),
);
type AlertView = z.infer<typeof alertsView>[number];

/** `matoolkit alerts`: the alerts the system raised (GET /api/alerts), open ones unless --all. */
export function registerAlertCommands(program: Command, runtime: CommandRuntime): void {
  program
    .command("alerts")
    .description("the alerts the system raised (failing sources, dead letters, stuck steps…), newest first")
    .option("--all", "resolved ones too (default: open ones only)")
    .option("--limit <n>", "at most this many (1-1000, default 200)", positiveId)
    .action(
      action(runtime, async (session, options: { all?: boolean; limit?: number }) => {
        const alerts = await session.api().json("GET", apiPath("alerts"), {
          query: { state: options.all === true ? "all" : "open", limit: options.limit },
        });
        session.output.result(alerts, (value) => {
          const rows = readAs(alertsView, value, "alerts");
          session.output.table(
            rows,
            [
              { header: "ID", value: (a: AlertView) => a.id },
              { header: "SEVERITY", value: (a: AlertView) => a.severity },
              { header: "CONDITION", value: (a: AlertView) => a.condition },
              { header: "SUBJECT", value: (a: AlertView) => a.subject },
              { header: "RAISED", value: (a: AlertView) => a.raisedAt },
              ...(options.all === true
                ? [{ header: "RESOLVED", value: (a: AlertView) => a.resolvedAt ?? "open" }]
                : []),
              { header: "SUMMARY", value: (a: AlertView) => a.summary },
            ],
            options.all === true ? "No alerts." : "No open alerts.",
          );
        });
      }),
    );
}
