import { statSync } from "node:fs";
import { z } from "zod";
import { DEFAULT_LEASE_SECONDS } from "./job-lease.ts";
import { MAX_START_WAIT_SECONDS, type PacingSettings } from "./pacing/worker-pacing.ts";

const inFlightCap = z.coerce
  .number({ error: "calls at once: a whole number, e.g. 8" })
  .int("calls at once: a whole number, e.g. 8")
  .min(1, "calls at once: at least 1")
  .max(1_000, "calls at once: at most 1000");

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
  /**
   * Issue 30, pacing: job starts per second of this worker process, lowered while the tenant
   * throttles and climbing back after (pacing/worker-pacing.ts); unset: not paced.
   */
  rateLimit: z.coerce
    .number({ error: "job starts per second: a number, e.g. 20 or 0.5" })
    .positive("job starts per second: a number > 0, e.g. 20 or 0.5")
    .max(10_000, "job starts per second: at most 10000")
    .optional(),
  /** Calls to Microsoft Graph at once from this process, lowered while Graph throttles; unset: not capped. */
  graphMaxInFlight: inFlightCap.optional(),
  /** The same for Exchange Online (its per-tenant concurrency limit is low: a few calls). */
  exchangeMaxInFlight: inFlightCap.optional(),
});
export type WorkerConfig = z.infer<typeof workerConfigSchema>;

export const workerEnvVariables = {
  workerId: "MATOOLKIT_WORKER_ID",
  concurrency: "MATOOLKIT_WORKER_CONCURRENCY",
  jobTimeoutSeconds: "MATOOLKIT_WORKER_JOB_TIMEOUT_SECONDS",
  functionsDir: "MATOOLKIT_FUNCTIONS_DIR",
  idleExitSeconds: "MATOOLKIT_WORKER_IDLE_EXIT_SECONDS",
  leaseSeconds: "MATOOLKIT_WORKER_LEASE_SECONDS",
  rateLimit: "MATOOLKIT_RATE_LIMIT",
  graphMaxInFlight: "MATOOLKIT_GRAPH_MAX_IN_FLIGHT",
  exchangeMaxInFlight: "MATOOLKIT_EXCHANGE_MAX_IN_FLIGHT",
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
  if (parsed.success) problems.push(...pacingProblems(parsed.data));
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

/** The pacing part of the settings, as startWorkerService takes it. */
export function pacingSettingsOf(config: WorkerConfig): PacingSettings {
  return {
    ...(config.rateLimit === undefined ? {} : { jobStartsPerSecond: config.rateLimit }),
    maxInFlight: {
      ...(config.graphMaxInFlight === undefined ? {} : { graph: config.graphMaxInFlight }),
      ...(config.exchangeMaxInFlight === undefined ? {} : { exchange: config.exchangeMaxInFlight }),
    },
  };
}

/**
 * Every delivery the worker holds may be waiting for its turn to start, and none may wait more
 * than MAX_START_WAIT_SECONDS (its message stays locked meanwhile): a rate too low to start
 * `concurrency` jobs in that time would leave deliveries waiting past it.
 */
function pacingProblems(config: WorkerConfig): string[] {
  const rate = config.rateLimit;
  if (rate === undefined || rate * MAX_START_WAIT_SECONDS >= config.concurrency) return [];
  const needed = Math.ceil((100 * config.concurrency) / MAX_START_WAIT_SECONDS) / 100;
  const most = Math.floor(rate * MAX_START_WAIT_SECONDS);
  return [
    `${workerEnvVariables.rateLimit}: ${rate} job starts per second cannot start the ` +
      `${config.concurrency} deliveries ${workerEnvVariables.concurrency} lets wait within ` +
      `${MAX_START_WAIT_SECONDS} s (the longest a delivery waits for its turn); set at least ${needed}` +
      (most >= 1 ? `, or lower ${workerEnvVariables.concurrency} to ${most} or less` : ""),
  ];
}
