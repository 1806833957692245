import { z } from "zod";
import { CliError, exitCodes } from "../errors.ts";

/**
 * Loose shapes of the API answers the human views read (extra members pass through). `--json`
 * never goes through these: it prints the answer unchanged. A mismatch means the CLI and the
 * server disagree on the contract, reported instead of printing a half-empty table.
 */
export function readAs<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new CliError(
    exitCodes.failed,
    "http.unexpected_response",
    `the admin API's ${what} does not have the expected shape (${issue?.path.join(".") || "body"}: ${issue?.message}); try --json`,
  );
}

const when = z.string().nullable();

export const runbookView = z.looseObject({
  id: z.number(),
  name: z.string(),
  version: z.number(),
  isActive: z.boolean(),
  overdueBehavior: z.string(),
  rerunInit: z.boolean(),
  createdAt: z.string(),
  lastError: z.string().nullable(),
  lastErrorAt: when,
  yamlContent: z.string().optional(),
});
export type RunbookView = z.infer<typeof runbookView>;

export const automationView = z.looseObject({
  runbookName: z.string(),
  automationEnabled: z.boolean(),
  enabledAt: when,
  enabledBy: z.string().nullable(),
  disabledAt: when,
  disabledBy: z.string().nullable(),
});

export const previewView = z.looseObject({
  runbookName: z.string(),
  runbookVersion: z.number(),
  automationEnabled: z.boolean(),
  limit: z.number(),
  rows: z.array(z.record(z.string(), z.unknown())),
  batches: z.array(
    z.looseObject({
      batchStartTime: z.string(),
      memberCount: z.number(),
      batchId: z.number().nullable(),
      batchStatus: z.string().nullable(),
    }),
  ),
  rowsInManualBatches: z.number(),
});

/** Issue 12: how an ended batch or phase went; absent from servers older than the field. */
const outcomeView = {
  outcome: z.string().nullable().optional(),
  succeededMembers: z.number().nullable().optional(),
  failedMembers: z.number().nullable().optional(),
};

export const batchView = z.looseObject({
  id: z.number(),
  runbookName: z.string(),
  runbookVersion: z.number(),
  status: z.string(),
  isManual: z.boolean(),
  batchStartTime: when,
  detectedAt: z.string(),
  createdBy: z.string().nullable(),
  currentPhase: z.string().nullable(),
  ...outcomeView,
  // Retention (issue 31); a server from before it sends neither.
  purgedAt: z.string().nullable().optional(),
  purgeMode: z.string().nullable().optional(),
});
export type BatchView = z.infer<typeof batchView>;

export const batchListItemView = batchView.extend({ memberCounts: z.record(z.string(), z.number()) });
export type BatchListItemView = z.infer<typeof batchListItemView>;

export const memberCountsView = z.looseObject({
  succeeded: z.number(),
  // Issue 30; a server from before it has no skipped steps.
  skipped: z.number().default(0),
  failed: z.number(),
  cancelled: z.number(),
  running: z.number(),
});
export type MemberCountsView = z.infer<typeof memberCountsView>;

/** A phase's approval gate (issue 30); older servers send none of it. */
export const approvalView = {
  approvalRequired: z.boolean().optional(),
  approvalExpiresAt: when.optional(),
  approvalDecision: z.string().nullable().optional(),
};

export const batchDetailView = batchView.extend({
  memberCounts: z.record(z.string(), z.number()),
  phases: z.array(
    z.looseObject({
      id: z.number(),
      phaseName: z.string(),
      sequence: z.number(),
      status: z.string(),
      dueAt: when,
      ...outcomeView,
      ...approvalView,
      memberCounts: memberCountsView,
    }),
  ),
});
export type BatchDetailView = z.infer<typeof batchDetailView>;

export const memberView = z.looseObject({
  id: z.number(),
  memberKey: z.string(),
  status: z.string(),
  addedAt: z.string(),
  removedAt: when,
  failedAt: when,
});

export const phaseView = z.looseObject({
  id: z.number(),
  phaseName: z.string(),
  sequence: z.number(),
  runbookVersion: z.number(),
  status: z.string(),
  dueAt: when,
  dispatchedAt: when,
  completedAt: when,
  ...outcomeView,
  ...approvalView,
  memberCounts: memberCountsView,
});

const executionView = z.looseObject({
  id: z.number(),
  stepName: z.string(),
  stepIndex: z.number(),
  // A for_each value (issue 30); a server from before it, or an init, has none.
  itemIndex: z.number().optional(),
  itemCount: z.number().nullable().optional(),
  functionName: z.string(),
  status: z.string(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
  retryCount: z.number(),
  rollback: z.looseObject({ name: z.string() }).nullable(),
});

export const stepsView = z.looseObject({
  init: z.array(executionView),
  steps: z.array(executionView.extend({ phaseExecutionId: z.number(), batchMemberId: z.number() })),
});

export const eventView = z.looseObject({
  id: z.number(),
  entity: z.string(),
  entityId: z.number(),
  fromStatus: z.string().nullable(),
  toStatus: z.string(),
  reason: z.string().nullable(),
  /** The operator whose request made the change; null (or absent from older servers) for the system's. */
  actor: z.string().nullable().optional(),
  /** The names the events read model joins in; absent from older servers, null for a row gone. */
  memberKey: z.string().nullable().optional(),
  phaseName: z.string().nullable().optional(),
  stepName: z.string().nullable().optional(),
  at: z.string(),
});
export type EventView = z.infer<typeof eventView>;

export const eventsPageView = z.looseObject({
  items: z.array(eventView),
  nextAfterId: z.number().nullable(),
});
