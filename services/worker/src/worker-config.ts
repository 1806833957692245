import { statSync } from "node:fs";
import { z } from "zod";
import { DEFAULT_LEASE_SECONDS } from "./job-lease.ts";

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
  /** Custom functions directory (000 `CustomFunctions/`); unset: none. Checked by workerConfigFromEnv. */
  functionsDir: z.string().min(1).optional(),
  /** 000 "Scale-to-Zero" (300 there): exit after this long with no delivery and no running job; unset: never. */
  idleExitSeconds: z.coerce.number().int().min(1).max(86_400).optional(),
  /**
   * Lease on a running job's claim, renewed every third of it: a worker killed mid-job has its
   * jobs taken over this long after its last renewal (issue 11). Short recovers sooner; long
   * rides out longer database stalls without another worker taking a live job over.
   */
  leaseSeconds: z.coerce.number().int().min(3).max(3600).default(DEFAULT_LEASE_SECONDS),
});
export type WorkerConfig = z.infer<typeof workerConfigSchema>;

export const workerEnvVariables = {
  workerId: "MATOOLKIT_WORKER_ID",
  concurrency: "MATOOLKIT_WORKER_CONCURRENCY",
  jobTimeoutSeconds: "MATOOLKIT_WORKER_JOB_TIMEOUT_SECONDS",
  functionsDir: "MATOOLKIT_FUNCTIONS_DIR",
  idleExitSeconds: "MATOOLKIT_WORKER_IDLE_EXIT_SECONDS",
  leaseSeconds: "MATOOLKIT_WORKER_LEASE_SECONDS",
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
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => {
        const field = String(issue.path[0]) as keyof WorkerConfig;
        return `${workerEnvVariables[field] ?? field}: ${issue.message}`;
      });
  const functionsDir = parsed.data?.functionsDir;
  if (functionsDir !== undefined) {
    const problem = directoryProblem(functionsDir);
    if (problem !== undefined) problems.push(`${workerEnvVariables.functionsDir}: ${problem}`);
  }
  if (parsed.success && problems.length === 0) return parsed.data;
  throw new Error(`Invalid worker configuration: ${problems.join("; ")}`);
}

function directoryProblem(path: string): string | undefined {
  try {
    return statSync(path).isDirectory() ? undefined : `${path} is not a directory`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? `${path} does not exist` : `${path} cannot be read (${code ?? "error"})`;
  }
}
