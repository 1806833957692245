import path from "node:path";
import { usageError } from "../errors.ts";
import { readIfPresent, writePrivateFile } from "../private-files.ts";
import { configKeyNames, isConfigKey, validateConfigValue, type ConfigKey } from "./config-keys.ts";

export type ConfigFileValues = Partial<Record<ConfigKey, string>>;

/** `MATOOLKIT_CONFIG` (tests, several profiles) or `~/.matoolkit/config.json` (000). */
export function configFilePath(
  env: Readonly<Record<string, string | undefined>>,
  home: string,
  cwd: string,
): string {
  const override = env.MATOOLKIT_CONFIG?.trim();
  return override ? path.resolve(cwd, override) : path.join(home, ".matoolkit", "config.json");
}

/**
 * The directory of the config file also holds the Entra sign-in (token cache, account record), so
 * a test or a second profile that points MATOOLKIT_CONFIG elsewhere gets its own sign-in too.
 */
export function stateDirectory(configPath: string): string {
  return path.dirname(configPath);
}

/** Reads and validates the file; a missing file is an empty config. Errors name the file and key. */
export async function readConfigFile(file: string): Promise<ConfigFileValues> {
  let text: string | undefined;
  try {
    text = await readIfPresent(file);
  } catch (error) {
    throw usageError("config.unreadable", `cannot read config file ${file}: ${(error as Error).message}`);
  }
  if (text === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw usageError("config.invalid", `config file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw usageError("config.invalid", `config file ${file} must hold a JSON object of settings`);
  }
  const values: ConfigFileValues = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!isConfigKey(key)) {
      throw usageError(
        "config.invalid",
        `config file ${file}: unknown key '${key}' (allowed: ${configKeyNames.join(", ")})`,
      );
    }
    if (typeof value !== "string") {
      throw usageError("config.invalid", `config file ${file}: key '${key}' must be a string`);
    }
    values[key] = validateConfigValue(key, value, `config file ${file}: key '${key}'`);
  }
  return values;
}

/** Writes the whole file at once, readable by its owner only (see writePrivateFile). */
export async function writeConfigFile(file: string, values: ConfigFileValues): Promise<void> {
  const ordered = Object.fromEntries(
    configKeyNames.filter((key) => values[key] !== undefined).map((key) => [key, values[key]]),
  );
  await writePrivateFile(file, `${JSON.stringify(ordered, null, 2)}\n`);
}
