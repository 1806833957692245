import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import type { z } from "zod";
import { apiPath } from "../http/api-client.ts";
import { action, type CommandRuntime } from "./action.ts";
import { positiveId } from "./arguments.ts";
import type { Session } from "./session.ts";
import { automationView, previewView, readAs } from "./views.ts";

/** 000 "Commands": automation status | enable | disable, query preview, template download. */
export function registerAutomationCommands(program: Command, runtime: CommandRuntime): void {
  const automation = program
    .command("automation")
    .description("switch a runbook's automated batches on or off");

  automation
    .command("status")
    .description("show whether the scheduler creates batches for a runbook")
    .argument("<runbook>", "runbook name")
    .action(
      action(runtime, async (session, runbook: string) => {
        printAutomation(session, await session.api().json("GET", apiPath("runbooks", runbook, "automation")));
      }),
    );

  for (const [name, enabled] of [
    ["enable", true],
    ["disable", false],
  ] as const) {
    automation
      .command(name)
      .description(
        `${name} automation: ${enabled ? "new batch times become batches from the next tick" : "no new batches (running ones continue)"}`,
      )
      .argument("<runbook>", "runbook name")
      .action(
        action(runtime, async (session, runbook: string) => {
          const settings = await session.api().json("PUT", apiPath("runbooks", runbook, "automation"), {
            body: { json: { enabled } },
          });
          printAutomation(session, settings);
        }),
      );
  }

  program
    .command("query")
    .description("preview a runbook's data source query")
    .command("preview")
    .description("run the query and show the rows and the batches a tick would form (nothing is written)")
    .argument("<runbook>", "runbook name")
    .option("--limit <n>", "rows to read (1-500, server default 20)", positiveId)
    .action(
      action(runtime, async (session, runbook: string, options: { limit?: number }) => {
        const preview = await session.api().json("POST", apiPath("runbooks", runbook, "query", "preview"), {
          query: { limit: options.limit },
        });
        session.output.result(preview, (value) =>
          printPreview(session, readAs(previewView, value, "query preview")),
        );
      }),
    );

  program
    .command("template")
    .description("CSV templates for manual batches")
    .command("download")
    .description("the CSV header a manual batch of this runbook needs (to stdout, or -o file)")
    .argument("<runbook>", "runbook name")
    .option("-o, --output <file>", "write to this file instead of stdout")
    .option("--version <version>", "a specific runbook version", positiveId)
    .action(
      action(runtime, async (session, runbook: string, options: { output?: string; version?: number }) => {
        // Always CSV, also with --json: the template is a file to fill in, not a JSON document.
        const csv = await session.api().text("GET", apiPath("runbooks", runbook, "template"), {
          query: { version: options.version },
        });
        if (options.output === undefined) {
          session.output.raw(csv);
          return;
        }
        const file = path.resolve(session.context.cwd, options.output);
        await writeFile(file, csv);
        session.context.stderr.write(`Wrote ${file}\n`);
      }),
    );
}

function printAutomation(session: Session, settings: unknown): void {
  session.output.result(settings, (value) => {
    const s = readAs(automationView, value, "automation settings");
    session.output.fields([
      ["Runbook", s.runbookName],
      ["Automation", s.automationEnabled ? "enabled" : "disabled"],
      ["Enabled", s.enabledAt === null ? null : `${s.enabledAt} by ${s.enabledBy ?? "?"}`],
      ["Disabled", s.disabledAt === null ? null : `${s.disabledAt} by ${s.disabledBy ?? "?"}`],
    ]);
  });
}

function printPreview(session: Session, preview: z.infer<typeof previewView>): void {
  const { output } = session;
  output.fields([
    ["Runbook", `${preview.runbookName} version ${preview.runbookVersion}`],
    ["Automation", preview.automationEnabled ? "enabled" : "disabled"],
    ["Rows read", `${preview.rows.length} (limit ${preview.limit})`],
    ["Rows in manual batches", preview.rowsInManualBatches],
  ]);
  output.line();
  output.table(
    preview.batches,
    [
      { header: "BATCH START", value: (b) => b.batchStartTime },
      { header: "MEMBERS", value: (b) => b.memberCount, align: "right" },
      { header: "BATCH", value: (b) => (b.batchId === null ? "new" : b.batchId) },
      { header: "STATUS", value: (b) => b.batchStatus },
    ],
    "No batches would be formed.",
  );
  output.line();
  const columns = [...new Set(preview.rows.flatMap((row) => Object.keys(row)))];
  output.table(
    preview.rows,
    columns.map((column) => ({
      header: column,
      value: (row: Record<string, unknown>) => row[column],
      shrink: true,
    })),
    "The query returned no rows.",
  );
}
