import { Command, CommanderError, Option } from "commander";
import { registerAlertCommands } from "./commands/alerts.commands.ts";
import { registerAuditCommands } from "./commands/audit.commands.ts";
import { registerAuthCommands } from "./commands/auth.commands.ts";
import { registerAutomationCommands } from "./commands/automation.commands.ts";
import { registerBatchCommands } from "./commands/batch.commands.ts";
import { registerConfigCommands } from "./commands/config.commands.ts";
import { registerMemberCommands } from "./commands/member.commands.ts";
import { registerPhaseCommands } from "./commands/phase.commands.ts";
import { registerRetentionCommands } from "./commands/retention.commands.ts";
import { registerRunbookCommands } from "./commands/runbook.commands.ts";
import { registerTenantCommands } from "./commands/tenant.commands.ts";
import { registerWebhookCommands } from "./commands/webhook.commands.ts";
import type { CommandRuntime } from "./commands/action.ts";
import { configKeyNames, configKeys } from "./config/config-keys.ts";
import type { CliContext } from "./context.ts";
import { CliError, exitCodes, formatCliError } from "./errors.ts";

/** Runs one command line (without `node` and the script) and returns the process exit code. */
export async function runCli(argv: readonly string[], context: CliContext): Promise<number> {
  const runtime: CommandRuntime = { context, exitCode: exitCodes.ok };
  const program = buildProgram(runtime);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return runtime.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version end with 0; every other commander error is a usage error (commander
      // has already printed it): exit 2, as scripts and shells expect.
      return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
    }
    if (error instanceof CliError) {
      context.stderr.write(formatCliError(error));
      return error.exitCode;
    }
    throw error;
  }
}

function buildProgram(runtime: CommandRuntime): Command {
  const { stdout, stderr } = runtime.context;
  const program = new Command("matoolkit")
    .description("matoolkit: the admin API from the command line (runbooks, automation, batches)")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => stdout.write(text),
      writeErr: (text) => stderr.write(text),
    })
    .showHelpAfterError("(add --help for usage)")
    .option("--json", "print the API's JSON answer unchanged (for scripts)");
  // Every setting is also a global flag, the highest of the three sources (000 hierarchy).
  for (const key of configKeyNames) {
    const definition = configKeys[key];
    program.addOption(new Option(`${definition.flag} <value>`, `${definition.description} [${key}]`));
  }
  registerRunbookCommands(program, runtime);
  registerAutomationCommands(program, runtime);
  registerBatchCommands(program, runtime);
  registerMemberCommands(program, runtime);
  registerPhaseCommands(program, runtime);
  registerAuthCommands(program, runtime);
  registerConfigCommands(program, runtime);
  registerWebhookCommands(program, runtime);
  registerAuditCommands(program, runtime);
  registerAlertCommands(program, runtime);
  registerTenantCommands(program, runtime);
  registerRetentionCommands(program, runtime);
  return program;
}
