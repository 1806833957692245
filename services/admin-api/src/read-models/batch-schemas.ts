import { batchMachine, memberMachine, outcomes, phaseMachine } from "@matoolkit/domain";
import { z } from "zod";
import { count, id, jsonObject, nullableTimestamp, timestamp } from "../openapi/wire-types.ts";
import { executionSchemas } from "./execution-schemas.ts";

/** Response bodies of the batch routes (the OpenAPI document's components). */

/**
 * How an ended batch or phase went for its members (issue 12), with the counts stamped with it.
 * Null while it runs, when it was cancelled, and for ends older than migration 0009.
 */
const outcomeFields = {
  outcome: z
    .enum(outcomes)
    .nullable()
    .meta({
      description:
        "succeeded: every member through; partially_succeeded: some failed, some through; failed: " +
        "none through (the status is then failed). Null while running or when cancelled",
    }),
  succeededMembers: count.nullable().meta({ description: "Members through, stamped with the outcome" }),
  failedMembers: count.nullable().meta({ description: "Members failed, stamped with the outcome" }),
};
/** A phase's approval gate (issue 30), as GET /api/batches/{id} summarises it. */
const approvalSummaryFields = {
  approvalRequired: z.boolean().meta({
    description:
      "The runbook gates the phase (approval: required): when due (or advanced) it waits in " +
      "awaiting_approval for POST /api/batches/{id}/phases/{seq}/approve or …/reject",
  }),
  approvalExpiresAt: nullableTimestamp.meta({
    description:
      "When its approval_timeout decides, once it waits; null without a timeout or before it waits",
  }),
  approvalDecision: z
    .enum(["approved", "rejected"])
    .nullable()
    .meta({ description: "How its wait ended (by an operator or the timeout: see the events); null before" }),
};

export const batchSchema = z
  .object({
    id,
    runbookId: id,
    batchStartTime: nullableTimestamp.meta({
      description: "Reference time of phase offsets; null when manual",
    }),
    status: z.enum(batchMachine.states),
    detectedAt: timestamp,
    initDispatchedAt: nullableTimestamp,
    isManual: z.boolean(),
    createdBy: z.string().nullable(),
    currentPhase: z.string().nullable(),
    externalRef: z
      .string()
      .nullable()
      .meta({
        description:
          "The change ticket or request id the batch belongs to: given at create, or the first member's " +
          "value of the runbook's data_source.external_ref_column; null when none",
      }),
    ...outcomeFields,
    purgedAt: nullableTimestamp.meta({
      description:
        "When the retention purge removed the batch's personal data (MATOOLKIT_RETENTION_DAYS after it " +
        "ended): members' data, params and results are then empty, or the rows gone (purgeMode); null before",
    }),
    purgeMode: z.enum(["scrub", "delete"]).nullable().meta({
      description: "scrub: keys and statuses kept, data emptied; delete: member and step rows removed",
    }),
  })
  .meta({ id: "Batch" });

const memberCountsSchema = z
  .record(z.enum(memberMachine.states), count)
  .meta({ description: "Members by status" });

export const batchListItemSchema = batchSchema
  .extend({ runbookName: z.string(), runbookVersion: z.int().min(1), memberCounts: memberCountsSchema })
  .meta({ id: "BatchListItem" });

export const createdBatchSchema = batchSchema
  .extend({ runbookName: z.string(), memberCount: count })
  .meta({ id: "CreatedBatch" });

export const phaseMemberCountsSchema = z
  .object({
    succeeded: count,
    skipped: count.meta({
      description: "Members whose every step of the phase its when: conditions skipped (they are through)",
    }),
    failed: count,
    cancelled: count,
    running: count,
  })
  .meta({ id: "PhaseMemberCounts", description: "How the phase went for its members" });

export const batchDetailSchema = batchListItemSchema
  .extend({
    phases: z.array(
      z.object({
        id,
        phaseName: z.string(),
        sequence: count,
        status: z.enum(phaseMachine.states),
        dueAt: nullableTimestamp,
        ...outcomeFields,
        ...approvalSummaryFields,
        memberCounts: phaseMemberCountsSchema,
      }),
    ),
  })
  .meta({ id: "BatchDetail" });

export const batchMemberSchema = z
  .object({
    id,
    batchId: id,
    memberKey: z.string(),
    dataJson: jsonObject.meta({
      description:
        "The member's data source row, secrets masked as `***` for every role: columns whose name " +
        "looks secret, columns marked `secret_columns`, columns a secret param uses, and their values " +
        "wherever else they appear",
    }),
    workerDataJson: jsonObject.meta({
      description: "Output of the member's steps so far, secrets masked as in dataJson",
    }),
    status: z.enum(memberMachine.states),
    addedAt: timestamp,
    removedAt: nullableTimestamp,
    failedAt: nullableTimestamp,
    addDispatchedAt: nullableTimestamp,
    removeDispatchedAt: nullableTimestamp,
    erasedAt: nullableTimestamp.meta({
      description:
        "When this member's data was erased on a data-subject request (DELETE /api/members/{key}); null before",
    }),
  })
  .meta({ id: "BatchMember" });

export const phaseExecutionSchema = z
  .object({
    id,
    batchId: id,
    phaseName: z.string(),
    sequence: count,
    offsetMinutes: z.int(),
    dueAt: nullableTimestamp,
    runbookVersion: z.int().min(1),
    status: z.enum(phaseMachine.states),
    dispatchedAt: nullableTimestamp,
    completedAt: nullableTimestamp,
    stepsCreatedAt: nullableTimestamp.meta({
      description:
        "When every member's steps of the phase existed (phase-due creates them in chunks); null before.",
    }),
    ...outcomeFields,
    ...approvalSummaryFields,
    approvalTimeoutSeconds: count
      .nullable()
      .meta({ description: "The runbook's approval_timeout; null: none" }),
    approvalTimeoutOutcome: z
      .enum(["approve", "reject"])
      .nullable()
      .meta({ description: "The runbook's approval_timeout_outcome; null without a timeout" }),
    memberCounts: phaseMemberCountsSchema,
  })
  .meta({ id: "PhaseExecution" });

export const batchExecutionsSchema = z
  .object({ init: z.array(executionSchemas.init), steps: z.array(executionSchemas.step) })
  .meta({ id: "BatchExecutions", description: "Init executions, then a page of step executions" });

export const statusEventSchema = z
  .object({
    id,
    batchId: id.nullable(),
    // A batch's timeline holds only the first five; runbook and automation rows (audit) have no batch.
    entity: z.enum(["batch", "member", "phase", "step", "init", "runbook", "automation", "webhook", "alert"]),
    entityId: id,
    fromStatus: z.string().nullable().meta({ description: "Null when the entity was created" }),
    toStatus: z.string(),
    reason: z.string().nullable(),
    actor: z.string().nullable().meta({
      description:
        "The operator whose request made the change (their token's identity); null for the system's own",
    }),
    at: timestamp,
    memberKey: z.string().nullable().meta({
      description:
        "The member a member or step event is about, by its key as the grid shows it; null for other entities",
    }),
    phaseName: z.string().nullable().meta({
      description: "The runbook phase of a phase or step event; null for other entities",
    }),
    stepName: z.string().nullable().meta({
      description:
        "The runbook step name of a step or init event, a for_each value's with its position (`add-to-group [2/5]`); null for other entities",
    }),
  })
  .meta({
    id: "StatusEvent",
    description:
      "A status change of the batch or one of its phases, members, steps or init steps, with the names " +
      "an operator knows them by (entityId is the row's id: a step event's is the step execution's)",
  });

export const eventPageSchema = z
  .object({
    items: z.array(statusEventSchema),
    nextAfterId: id.nullable().meta({ description: "Pass as afterId for the next page; null when none" }),
  })
  .meta({ id: "EventPage" });

export const advanceResultSchema = z
  .discriminatedUnion("action", [
    z.object({ action: z.literal("init"), batchId: id }),
    z.object({
      action: z.literal("phase"),
      batchId: id,
      phaseName: z.string(),
      phaseExecutionId: id,
      sequence: count.meta({
        description: "The phase's position in the runbook (0-based), as …/phases/{seq} names it",
      }),
      phaseStatus: z.enum(["dispatched", "awaiting_approval"]).meta({
        description:
          "awaiting_approval: the runbook gates the phase (approval: required); nothing is sent until " +
          "POST /api/batches/{id}/phases/{seq}/approve",
      }),
    }),
  ])
  .meta({ id: "AdvanceResult", description: "What was dispatched: the init steps or the next phase" });

export const cancelResultSchema = z
  .object({
    batchId: id,
    status: z.literal("cancelled"),
    cancelled: z.object({ phases: count, steps: count, inits: count }),
  })
  .meta({ id: "CancelResult" });
