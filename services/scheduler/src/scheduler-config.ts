import { parseOrExplain } from "@matoolkit/platform";
import { z } from "zod";

export const schedulerConfigSchema = z.object({
  pollSweepSeconds: z.coerce.number().int().min(5).max(3600).default(300),
});
export type SchedulerConfig = z.infer<typeof schedulerConfigSchema>;

export function schedulerConfigFromEnv(env: Record<string, string | undefined>): SchedulerConfig {
  return parseOrExplain(
    schedulerConfigSchema,
    { pollSweepSeconds: env.MATOOLKIT_POLL_SWEEP_SECONDS || undefined },
    {
      pollSweepSeconds: "MATOOLKIT_POLL_SWEEP_SECONDS",
    },
  );
}
