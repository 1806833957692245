/**
 * The commands of the production bundle (`node dist/matoolkit.mjs <command>`), in one place so
 * the entry, the image's healthcheck and the compose/Dockerfile tests agree on the list.
 * Services run until signalled; `migrate` and `token` do their job and exit.
 */
export const commands = [
  "all-in-one",
  "admin-api",
  "orchestrator",
  "scheduler",
  "worker",
  "migrate",
  "token",
] as const;
export type Command = (typeof commands)[number];

/** What runs when neither an argument nor MATOOLKIT_SERVICE names a command. */
export const defaultCommand: Command = "all-in-one";

export function isCommand(value: string): value is Command {
  return (commands as readonly string[]).includes(value);
}

/** The chosen command and the arguments left for it; `unknown` carries what was asked for. */
export type CommandChoice =
  | { readonly kind: "command"; readonly command: Command; readonly args: readonly string[] }
  | { readonly kind: "unknown"; readonly requested: string };

/**
 * argv[0] (the first argument after the script) wins over MATOOLKIT_SERVICE, which wins over the
 * default, as the deployment contract says: a container picks its service with `args` or `env`.
 */
export function chooseCommand(argv: readonly string[], service: string | undefined): CommandChoice {
  const [first, ...rest] = argv;
  // An option (`--role Admin`) is not a command: it belongs to the command MATOOLKIT_SERVICE names.
  const fromArgument = first?.startsWith("-") ? undefined : first?.trim() || undefined;
  const requested = fromArgument ?? (service?.trim() || undefined) ?? defaultCommand;
  if (!isCommand(requested)) return { kind: "unknown", requested };
  return { kind: "command", command: requested, args: fromArgument === undefined ? argv : rest };
}

export function unknownCommandMessage(requested: string): string {
  return `matoolkit: unknown command "${requested}": allowed commands are ${commands.join(", ")} (default ${defaultCommand}; the first argument, else MATOOLKIT_SERVICE)`;
}
