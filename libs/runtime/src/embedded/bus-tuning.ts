import { z } from "zod";
import { DEFAULT_DEDUPE_WINDOW_SECONDS } from "../ports/index.ts";

/** Knobs of the embedded bus; defaults follow 000 "Service Bus Architecture". */
export const busTuningSchema = z.object({
  /** Duplicate-detection window per topic (000: 10 minutes). */
  dedupeWindowSeconds: z.number().positive().default(DEFAULT_DEDUPE_WINDOW_SECONDS),
  /** Safety-net poll of each consumer; a publish wakes consumers at once through NOTIFY. */
  pollingIntervalSeconds: z.number().min(0.05).default(0.5),
  /**
   * Wait before redelivering a failed message. Service Bus redelivers at once; a small, growing
   * delay keeps 10 attempts from burning out during a short outage (a database restart). Tests
   * use 0 with no backoff.
   */
  retryDelaySeconds: z.number().int().min(0).default(2),
  retryBackoff: z.boolean().default(true),
  /** Lock on a delivery, renewed while the handler runs (000: lock duration 1 minute). */
  lockSeconds: z.number().int().min(1).default(60),
});
export type BusTuning = z.input<typeof busTuningSchema>;
export type ResolvedBusTuning = z.output<typeof busTuningSchema>;
