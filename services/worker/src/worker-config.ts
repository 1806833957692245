import { z } from "zod";

/**
 * A worker process's settings. The id lands in a subscription name and in a Service Bus SQL
 * filter (`WorkerId = '…'`), so it is limited to characters that are safe in both.
 */
export const workerConfigSchema = z.object({
  workerId: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/,
      "letters, digits, '.', '_' or '-' (at most 63), starting with a letter or digit",
    )
    .default("worker-01"),
  concurrency: z.coerce.number().int().min(1).max(256).default(4),
  jobTimeoutSeconds: z.coerce.number().int().min(1).default(3600),
});
export type WorkerConfig = z.infer<typeof workerConfigSchema>;

export const workerEnvVariables = {
  workerId: "MATOOLKIT_WORKER_ID",
  concurrency: "MATOOLKIT_WORKER_CONCURRENCY",
  jobTimeoutSeconds: "MATOOLKIT_WORKER_JOB_TIMEOUT_SECONDS",
} as const satisfies Record<keyof WorkerConfig, string>;

/**
 * For entry points: reads the variables (unset or blank means the default) and fails fast with a
 * message naming the variable at fault, so a misconfigured container dies at start with a reason.
 */
export function workerConfigFromEnv(env: Readonly<Record<string, string | undefined>>): WorkerConfig {
  const input: Record<string, string | undefined> = {};
  for (const [field, variable] of Object.entries(workerEnvVariables)) {
    const value = env[variable]?.trim();
    input[field] = value === "" ? undefined : value;
  }
  const parsed = workerConfigSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const field = String(issue.path[0]) as keyof WorkerConfig;
    return `${workerEnvVariables[field] ?? field}: ${issue.message}`;
  });
  throw new Error(`Invalid worker configuration: ${problems.join("; ")}`);
}
