import { parseOrExplain } from "@matoolkit/platform";
import { z } from "zod";
import { requestLimitVariables, requestLimitsSchema, type RequestLimits } from "./http/request-limits.ts";

export const adminApiConfigSchema = z.object({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.coerce.number().int().min(0).max(65535).default(8080),
  /**
   * POST /api/batches refuses (409 batch.duplicate) a CSV identical to one uploaded for the same
   * runbook this many minutes ago whose batch is not cancelled; 0 turns the check off.
   */
  duplicateBatchWindowMinutes: z.coerce.number().int().min(0).max(10_080).default(10),
});
export type AdminApiConfig = z.infer<typeof adminApiConfigSchema> & {
  /** Body, row and heavy-request caps (http/request-limits.ts), MATOOLKIT_MAX_* and MATOOLKIT_HEAVY_*. */
  readonly requestLimits: RequestLimits;
};

export function adminApiConfigFromEnv(env: Record<string, string | undefined>): AdminApiConfig {
  return { ...serverConfigFromEnv(env), requestLimits: requestLimitsFromEnv(env) };
}

export function requestLimitsFromEnv(env: Record<string, string | undefined>): RequestLimits {
  const raw = Object.fromEntries(
    Object.entries(requestLimitVariables).map(([field, name]) => [field, env[name]?.trim() || undefined]),
  );
  return parseOrExplain(requestLimitsSchema, raw, requestLimitVariables);
}

function serverConfigFromEnv(env: Record<string, string | undefined>) {
  return parseOrExplain(
    adminApiConfigSchema,
    {
      host: env.MATOOLKIT_API_HOST || undefined,
      port: env.PORT || undefined,
      duplicateBatchWindowMinutes: env.MATOOLKIT_DUPLICATE_BATCH_WINDOW_MINUTES || undefined,
    },
    {
      host: "MATOOLKIT_API_HOST",
      port: "PORT",
      duplicateBatchWindowMinutes: "MATOOLKIT_DUPLICATE_BATCH_WINDOW_MINUTES",
    },
  );
}
