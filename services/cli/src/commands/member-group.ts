import type { Command } from "commander";

/**
 * `matoolkit member …`: one person across batches. Two modules add to it (`member find`,
 * member.commands.ts; `member erase`, retention.commands.ts), so each asks for the group here
 * rather than creating it: commander would otherwise hold two `member` commands and run the first.
 */
export function memberCommandGroup(program: Command): Command {
  const existing = program.commands.find((command) => command.name() === "member");
  return existing ?? program.command("member").description("one person across batches: find, erase");
}
