import { Option, type Command } from "commander";
import { apiPath } from "../http/api-client.ts";
import { action, type CommandRuntime } from "./action.ts";
import { positiveId } from "./arguments.ts";
import { readInputFile } from "./read-file.ts";
import { registerRunbookPlanCommand } from "./runbook-plan.command.ts";
import { readAs, runbookView, type RunbookView } from "./views.ts";
import { z } from "zod";

const runbookColumns = [
  { header: "NAME", value: (r: RunbookView) => r.name },
  { header: "VERSION", value: (r: RunbookView) => r.version, align: "right" as const },
  { header: "ACTIVE", value: (r: RunbookView) => r.isActive },
  { header: "OVERDUE", value: (r: RunbookView) => r.overdueBehavior },
  { header: "RERUN INIT", value: (r: RunbookView) => r.rerunInit },
  { header: "CREATED", value: (r: RunbookView) => r.createdAt },
  { header: "LAST ERROR", value: (r: RunbookView) => r.lastError, shrink: true },
];

const deactivatedView = z.looseObject({
  name: z.string(),
  version: z.number(),
  alreadyInactive: z.boolean(),
});

/** 000 "Commands": runbook publish | list | get | versions | delete. */
export function registerRunbookCommands(program: Command, runtime: CommandRuntime): void {
  const runbook = program.command("runbook").description("publish and inspect runbooks");

  runbook
    .command("publish")
    .description("publish a runbook YAML file as the runbook's next version")
    .argument("<file>", "runbook YAML")
    .addOption(
      new Option("--overdue-behavior <behavior>", "phases already past due on a version change").choices([
        "rerun",
        "ignore",
      ]),
    )
    .option("--rerun-init", "send the init steps again to running batches moved to this version")
    .action(
      action(
        runtime,
        async (session, file: string, options: { overdueBehavior?: string; rerunInit?: boolean }) => {
          const yaml = await readInputFile(session.context.cwd, file, "runbook file");
          const published = await session.api().json("POST", "/runbooks", {
            body: { text: yaml, contentType: "application/yaml" },
            query: { overdueBehavior: options.overdueBehavior, rerunInit: options.rerunInit },
          });
          session.output.result(published, (value) => {
            const r = readAs(runbookView, value, "published runbook");
            session.output.line(`Published ${r.name} version ${r.version} (id ${r.id}).`);
          });
        },
      ),
    );

  runbook
    .command("list")
    .description("list the active runbooks")
    .action(
      action(runtime, async (session) => {
        const list = await session.api().json("GET", "/runbooks");
        session.output.result(list, (value) =>
          session.output.table(
            readAs(z.array(runbookView), value, "runbook list"),
            runbookColumns,
            "No runbooks.",
          ),
        );
      }),
    );

  runbook
    .command("get")
    .description("show a runbook's active version (or --version) and its YAML")
    .argument("<name>", "runbook name")
    .option("--version <version>", "a specific version", positiveId)
    .action(
      action(runtime, async (session, name: string, options: { version?: number }) => {
        const path =
          options.version === undefined
            ? apiPath("runbooks", name)
            : apiPath("runbooks", name, "versions", options.version);
        const found = await session.api().json("GET", path);
        session.output.result(found, (value) => {
          const r = readAs(runbookView, value, "runbook");
          session.output.fields([
            ["Name", r.name],
            ["Version", r.version],
            ["Active", r.isActive],
            ["Overdue behavior", r.overdueBehavior],
            ["Rerun init", r.rerunInit],
            ["Created", r.createdAt],
            ["Last error", r.lastError === null ? null : `${r.lastError} (${r.lastErrorAt ?? "?"})`],
          ]);
          session.output.line();
          session.output.raw(r.yamlContent?.endsWith("\n") ? r.yamlContent : `${r.yamlContent ?? ""}\n`);
        });
      }),
    );

  runbook
    .command("versions")
    .description("list every version of a runbook")
    .argument("<name>", "runbook name")
    .action(
      action(runtime, async (session, name: string) => {
        const versions = await session.api().json("GET", apiPath("runbooks", name, "versions"));
        session.output.result(versions, (value) =>
          session.output.table(
            readAs(z.array(runbookView), value, "version list"),
            runbookColumns.filter((c) => c.header !== "NAME"),
            "No versions.",
          ),
        );
      }),
    );

  runbook
    .command("delete")
    .description("deactivate a runbook version (it is kept, never erased)")
    .argument("<name>", "runbook name")
    .argument("<version>", "version number", positiveId)
    .action(
      action(runtime, async (session, name: string, version: number) => {
        const result = await session.api().json("DELETE", apiPath("runbooks", name, "versions", version));
        session.output.result(result, (value) => {
          const r = readAs(deactivatedView, value, "deactivation");
          session.output.line(
            r.alreadyInactive
              ? `${r.name} version ${r.version} was already inactive.`
              : `Deactivated ${r.name} version ${r.version}.`,
          );
        });
      }),
    );

  registerRunbookPlanCommand(runbook, runtime);
}
