import { z } from "zod";
import { parseOrExplain } from "./platform-config.ts";

/**
 * Retention of personal data (issue 31 item 2, docs/configuration.md): read by the scheduler (its
 * daily purge job) and the admin API (POST /api/purge), so both must see the same values.
 *
 * - MATOOLKIT_RETENTION_DAYS: batches that ended more than this many days ago lose their personal
 *   data; default 90; `0` or `off` turns retention off (no daily job; POST /api/purge answers 409).
 * - MATOOLKIT_RETENTION_MODE: `scrub` (default: member data, params, results and error messages
 *   emptied; keys, statuses and timestamps kept for the record) or `delete` (the batch's member,
 *   phase, step and init rows removed; the batch row, its timeline and audit rows kept).
 */
export const MAX_RETENTION_DAYS = 36_500;

const daysSchema = z
  .string()
  .trim()
  .toLowerCase()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined || value === "") return 90;
    if (value === "off") return 0;
    if (!/^\d+$/.test(value) || Number(value) > MAX_RETENTION_DAYS) {
      ctx.addIssue({
        code: "custom",
        message: `must be a whole number of days from 0 to ${MAX_RETENTION_DAYS}, or "off" (0 and off disable retention)`,
      });
      return z.NEVER;
    }
    return Number(value);
  });

export const retentionConfigSchema = z.object({
  /** 0: retention off. */
  retentionDays: daysSchema,
  retentionMode: z
    .string()
    .trim()
    .toLowerCase()
    .optional()
    .transform((value) => (value === undefined || value === "" ? "scrub" : value))
    .pipe(z.enum(["scrub", "delete"], 'must be "scrub" or "delete"')),
});
export type RetentionConfig = z.infer<typeof retentionConfigSchema>;

export const retentionVariables: Record<keyof RetentionConfig, string> = {
  retentionDays: "MATOOLKIT_RETENTION_DAYS",
  retentionMode: "MATOOLKIT_RETENTION_MODE",
};

export function retentionConfigFromEnv(env: Record<string, string | undefined>): RetentionConfig {
  return parseOrExplain(
    retentionConfigSchema,
    { retentionDays: env.MATOOLKIT_RETENTION_DAYS, retentionMode: env.MATOOLKIT_RETENTION_MODE },
    retentionVariables,
  );
}
