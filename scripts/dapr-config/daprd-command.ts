/**
 * Reads a daprd command line (a Docker Compose `command`) into its flags, so the sidecar's app
 * id, ports and paths can be checked. daprd uses Go's flag package: `-flag value`,
 * `--flag value` and `--flag=value` are the same, and boolean flags take no value.
 */

/** daprd flags that are booleans (present = true) rather than taking the next argument. */
const booleanFlags = new Set([
  "enable-app-health-check",
  "enable-profiling",
  "enable-mtls",
  "enable-api-logging",
  "app-ssl",
  "log-as-json",
]);

export type DaprdFlags = ReadonlyMap<string, readonly string[]>;

/** A Compose `command` as an argument list; a string is split on whitespace, like Compose does. */
export function commandArguments(command: unknown): string[] | undefined {
  if (typeof command === "string") return command.trim().split(/\s+/);
  if (Array.isArray(command) && command.every((part) => typeof part === "string")) return command;
  return undefined;
}

export function isDaprdCommand(argv: readonly string[]): boolean {
  const program = argv[0];
  return program !== undefined && /(^|\/)daprd$/.test(program);
}

/** Flags by name (without dashes); a repeated flag (e.g. --resources-path) keeps every value. */
export function parseDaprdFlags(argv: readonly string[]): DaprdFlags {
  const flags = new Map<string, string[]>();
  const add = (name: string, value: string): void => {
    flags.set(name, [...(flags.get(name) ?? []), value]);
  };
  for (let index = 1; index < argv.length; index += 1) {
    const argument = argv[index] ?? "";
    const flag = /^--?([a-z][a-z0-9-]*)(?:=(.*))?$/.exec(argument);
    if (!flag) continue;
    const name = flag[1] ?? "";
    if (flag[2] !== undefined) {
      add(name, flag[2]);
    } else if (booleanFlags.has(name)) {
      add(name, "true");
    } else {
      const next = argv[index + 1];
      add(name, next ?? "");
      index += 1;
    }
  }
  return flags;
}

/** The single value of a flag (the last one when repeated), or undefined when absent. */
export function flagValue(flags: DaprdFlags, name: string): string | undefined {
  return flags.get(name)?.at(-1);
}
