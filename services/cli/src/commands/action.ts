import type { Command } from "commander";
import type { CliContext } from "../context.ts";
import { openSession, type Session } from "./session.ts";

/** Shared by every command of one run: the context, and the exit code a command may set. */
export interface CommandRuntime {
  readonly context: CliContext;
  exitCode: number;
}

/**
 * Adapts a handler to commander's action signature `(...arguments, options, command)`: opens the
 * session from the command's options and records the exit code the handler returns (if any).
 */
export function action<A extends unknown[]>(
  runtime: CommandRuntime,
  handler: (session: Session, ...args: A) => Promise<number | void>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const session = await openSession(runtime.context, command);
    const code = await handler(session, ...(args.slice(0, -1) as A));
    if (typeof code === "number") runtime.exitCode = code;
  };
}
