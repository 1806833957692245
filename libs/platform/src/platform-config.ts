import { z } from "zod";

/**
 * Everything a service process needs to know about where it runs, parsed once from the
 * environment by the entry point (main.ts) and passed down. Libraries never read process.env.
 * Defaults are the embedded mode: a fresh clone needs no variable at all.
 */
export const platformConfigSchema = z.object({
  /** PostgreSQL server to use; when absent an embedded PostgreSQL runs in `<dataDir>/postgres`. */
  databaseUrl: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  /** Local state: embedded database, local signing key. */
  dataDir: z.string().min(1).default(".matoolkit"),
  embeddedPostgresPort: z.coerce.number().int().min(1024).max(65535).default(54329),
  /** Runtime adapter: embedded (pg-boss on PostgreSQL); dapr arrives with the Dapr issue. */
  runtime: z.enum(["embedded"]).default("embedded"),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  dedupeWindowSeconds: z.coerce.number().int().positive().default(600),
});
export type PlatformConfig = z.infer<typeof platformConfigSchema>;

const envNames: Record<keyof PlatformConfig, string> = {
  databaseUrl: "DATABASE_URL",
  dataDir: "MATOOLKIT_DATA_DIR",
  embeddedPostgresPort: "MATOOLKIT_EMBEDDED_PG_PORT",
  runtime: "MATOOLKIT_RUNTIME",
  logLevel: "LOG_LEVEL",
  dedupeWindowSeconds: "MATOOLKIT_DEDUPE_WINDOW_SECONDS",
};

/** Fails fast, naming every bad variable (never its value: a URL may hold a password). */
export function platformConfigFromEnv(env: Record<string, string | undefined>): PlatformConfig {
  const raw = Object.fromEntries(
    Object.entries(envNames).map(([key, name]) => [key, emptyToUndefined(env[name])]),
  );
  return parseOrExplain(platformConfigSchema, raw, envNames);
}

export function parseOrExplain<T extends z.ZodType>(
  schema: T,
  raw: unknown,
  names: Record<string, string>,
): z.infer<T> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? "");
    return `${names[key] ?? key}: ${issue.message}`;
  });
  throw new Error(`Invalid configuration: ${problems.join("; ")}`);
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
