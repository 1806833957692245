import type { Command } from "commander";
import type { CommandRuntime } from "./action.ts";
import { registerBatchReadCommands } from "./batch-read.commands.ts";
import { registerBatchRedriveCommand } from "./batch-redrive.command.ts";
import { registerBatchReportCommand } from "./batch-report.command.ts";
import { registerBatchWriteCommands } from "./batch-write.commands.ts";

/** 000 "Commands": batch list | get | create | advance | cancel | members | add-members | … */
export function registerBatchCommands(program: Command, runtime: CommandRuntime): void {
  const batch = program.command("batch").description("create, advance and follow batches");
  registerBatchReadCommands(batch, runtime);
  registerBatchWriteCommands(batch, runtime);
  registerBatchRedriveCommand(batch, runtime);
  registerBatchReportCommand(batch, runtime);
}
