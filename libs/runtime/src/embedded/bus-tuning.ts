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
  /**
   * Lock on a delivery, renewed every third of it while the handler runs, so a long handler keeps
   * it (000's Service Bus lock is 1 minute). It bounds how soon the message of a killed consumer
   * is delivered again: at most this after the last renewal, plus one maintenance interval. 30 s
   * keeps crash recovery under a minute (issue 11); the worker's job leases, not this lock, are
   * what make running a job again safe.
   */
  lockSeconds: z.number().int().min(1).default(30),
  /**
   * How often pg-boss maintenance runs (one process at a time): it fails the deliveries whose
   * lock expired, which puts them back in their queue. pg-boss's own default is 2 minutes.
   */
  maintenanceIntervalSeconds: z.number().int().min(1).default(10),
});
export type BusTuning = z.input<typeof busTuningSchema>;
export type ResolvedBusTuning = z.output<typeof busTuningSchema>;
