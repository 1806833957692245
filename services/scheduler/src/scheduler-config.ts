import { parseOrExplain } from "@matoolkit/platform";
import { z } from "zod";

export const schedulerConfigSchema = z.object({
  /** The poll sweep (000 Timer Lifecycle step 3). */
  pollSweepSeconds: z.coerce.number().int().min(5).max(3600).default(300),
  /** The tick that queries data sources, syncs batches and dispatches due phases (000: 5 minutes). */
  tickSeconds: z.coerce.number().int().min(5).max(86_400).default(300),
  /** The alert evaluator (issue 31): how often the conditions are checked against the database. */
  alertsEvaluateSeconds: z.coerce.number().int().min(5).max(3600).default(60),
});
export type SchedulerConfig = z.infer<typeof schedulerConfigSchema>;

const envNames: Record<keyof SchedulerConfig, string> = {
  pollSweepSeconds: "MATOOLKIT_POLL_SWEEP_SECONDS",
  tickSeconds: "MATOOLKIT_SCHEDULER_TICK_SECONDS",
  alertsEvaluateSeconds: "MATOOLKIT_ALERTS_EVALUATE_SECONDS",
};

export function schedulerConfigFromEnv(env: Record<string, string | undefined>): SchedulerConfig {
  return parseOrExplain(
    schedulerConfigSchema,
    {
      pollSweepSeconds: env[envNames.pollSweepSeconds] || undefined,
      tickSeconds: env[envNames.tickSeconds] || undefined,
      alertsEvaluateSeconds: env[envNames.alertsEvaluateSeconds] || undefined,
    },
    envNames,
  );
}
