import type { z } from "zod";

export type Env = Record<string, string | undefined>;

/** Treats empty strings as unset: `FOO= npm start` should behave like not setting FOO. */
export function readEnv(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

export function requireEnv(env: Env, name: string, mode: string): string {
  const value = readEnv(env, name);
  if (value === undefined) throw new Error(`${name} is required when MATOOLKIT_AUTH_MODE=${mode}`);
  return value;
}

/** Parses one variable's value, failing with a message that names the variable (not the value). */
export function parseEnvValue<T>(name: string, schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new Error(`Invalid ${name}: ${parsed.error.issues[0]?.message ?? "invalid value"}`);
  return parsed.data;
}
