import { z } from "zod";

/**
 * Ids and names carried by messages (JobId, WorkerId, FunctionName, RunbookName, PhaseName)
 * become idempotency keys, log fields and SQL parameters. Bounding them here makes an oversized
 * one an invalid message (dead-lettered at once) instead of a failure deep in a store that the
 * bus would retry for minutes. Real values are far shorter: job ids like `step-123-retry-1`.
 */
export const messageName = z.string().min(1).max(256);

/** Member keys are indexed in SQL (≤512 characters, as for CSV and data source rows). */
export const messageMemberKey = z.string().min(1).max(512);
