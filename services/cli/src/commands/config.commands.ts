import { Argument, type Command } from "commander";
import {
  configKeyNames,
  configKeys,
  isConfigKey,
  validateConfigValue,
  type ConfigKey,
} from "../config/config-keys.ts";
import { configFilePath, readConfigFile, writeConfigFile } from "../config/config-file.ts";
import type { resolveConfig } from "../config/resolve-config.ts";
import type { CliContext } from "../context.ts";
import { usageError } from "../errors.ts";
import { Output } from "../output/output.ts";
import { action, type CommandRuntime } from "./action.ts";

/** 000 "Commands": config show | set | path (and unset). */
export function registerConfigCommands(program: Command, runtime: CommandRuntime): void {
  const config = program.command("config").description("the CLI's settings (~/.matoolkit/config.json)");
  const keyArgument = () => new Argument("<key>", `one of ${configKeyNames.join(", ")}`).argParser(configKey);

  config
    .command("show")
    .description("every setting with its value and where it came from (flag, env, file, default)")
    .action(
      action(runtime, async (session) => {
        session.output.result(session.config, (resolved) =>
          session.output.table(
            configKeyNames,
            [
              { header: "KEY", value: (key: ConfigKey) => key },
              { header: "VALUE", value: (key: ConfigKey) => resolved[key].value, shrink: true },
              { header: "SOURCE", value: (key: ConfigKey) => sourceLabel(key, resolved[key].source) },
            ],
            "",
          ),
        );
      }),
    );

  config
    .command("set")
    .description("validate a setting and save it in the config file")
    .addArgument(keyArgument())
    .argument("<value>", "the value")
    .action(
      action(runtime, async (session, key: ConfigKey, value: string) => {
        const file = await readConfigFile(session.configPath);
        file[key] = validateConfigValue(key, value, key);
        await writeConfigFile(session.configPath, file);
        session.output.result({ key, value: file[key], file: session.configPath }, () =>
          session.output.line(`Set ${key} = ${file[key]} in ${session.configPath}`),
        );
      }),
    );

  config
    .command("unset")
    .description("remove a setting from the config file")
    .addArgument(keyArgument())
    .action(
      action(runtime, async (session, key: ConfigKey) => {
        const file = await readConfigFile(session.configPath);
        delete file[key];
        await writeConfigFile(session.configPath, file);
        session.output.line(`Removed ${key} from ${session.configPath}`);
      }),
    );

  // No session: the path must print even when the file it names is broken.
  config
    .command("path")
    .description("print the config file's path")
    .action((_options, command: Command) => printPath(runtime.context, command));
}

function printPath(context: CliContext, command: Command): void {
  const file = configFilePath(context.env, context.home, context.cwd);
  const output = new Output(context.stdout, command.optsWithGlobals().json === true);
  output.result({ path: file }, () => output.line(file));
}

function configKey(value: string): ConfigKey {
  if (isConfigKey(value)) return value;
  throw usageError("config.unknown_key", `unknown key '${value}' (allowed: ${configKeyNames.join(", ")})`);
}

function sourceLabel(key: ConfigKey, source: ReturnType<typeof resolveConfig>[ConfigKey]["source"]): string {
  switch (source) {
    case "flag":
      return `flag ${configKeys[key].flag}`;
    case "env":
      return `env ${configKeys[key].env}`;
    case "file":
      return "file";
    case "default":
      return "default";
    case "unset":
      return "-";
    default: {
      const unreachable: never = source;
      throw new Error(`Unknown source ${String(unreachable)}`);
    }
  }
}
