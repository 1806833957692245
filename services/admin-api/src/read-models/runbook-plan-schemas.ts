import { z } from "zod";
import { count, jsonObject, nullableTimestamp } from "../openapi/wire-types.ts";

/** POST /api/runbooks/{name}/plan: the dry run's answer (the OpenAPI document's components). */
export const plannedStepSchema = z
  .object({
    step: z.string(),
    workerId: z.string(),
    functionName: z
      .string()
      .meta({ description: "Resolved; a name left for run time keeps its {{template}}" }),
    params: jsonObject.meta({
      description:
        "Resolved parameters; values of secret-looking names (secret, password, token, key, " +
        "credential, certificate, connection string, …) and values templated from such variables are ***",
    }),
    unresolved: z.array(z.string()).meta({
      description: "Variables found nowhere: the step would fail with template.unresolved",
    }),
    resolvedAtRunTime: z.array(z.string()).meta({
      description: "{{_batch_id}} and worker outputs of earlier steps: known once the batch runs",
    }),
    when: z.string().nullable().meta({ description: "The step's own when: condition as written" }),
    whenDecision: z.enum(["always", "runs", "skipped", "at_run_time", "invalid"]).meta({
      description:
        "always: no condition (its own or its phase's); runs / skipped: decided from the member's " +
        "data; at_run_time: it reads an earlier step's output or {{_batch_id}}; invalid: it cannot be " +
        "decided for this member (the step would fail with condition.invalid)",
    }),
    forEach: z
      .object({
        expression: z.string().meta({ description: "The step's for_each: as written" }),
        values: z
          .int()
          .min(0)
          .nullable()
          .meta({
            description:
              "Executions of the step for this member (one per value; 0: the step is skipped); " +
              "null when the list is an earlier step's output (known at run time) or cannot be expanded",
          }),
        problem: z.enum(["for_each.too_many", "for_each.not_a_list"]).nullable().meta({
          description: "The reason code the member would fail with: more than 1,000 values, or not a list",
        }),
      })
      .nullable()
      .meta({ description: "The step's for_each: and its expansion for the member; null when it has none" }),
  })
  .meta({ id: "PlannedStep" });

export const runbookPlanSchema = z
  .object({
    runbook: z.object({ name: z.string(), version: z.int().min(1) }),
    input: z
      .enum(["csv", "source"])
      .meta({ description: "Members from the CSV body or the runbook's data source" }),
    memberCount: count.meta({ description: "Members in the input (every CSV row, every source row)" }),
    checkedMemberCount: count.meta({
      description: "Members whose steps were planned: every CSV member; the first `limit` source rows",
    }),
    unresolvedCount: count.meta({
      description:
        "Planned steps (init steps once per batch) with at least one unresolved variable, " +
        "leaving out the steps their when: skips",
    }),
    limit: count.meta({ description: "At most this many members are listed" }),
    batches: z.array(
      z.object({
        batchStartTime: nullableTimestamp.meta({
          description: "null for a manual batch (CSV); the rows' batch time, or now for immediate batching",
        }),
        init: z.array(plannedStepSchema),
        members: z.array(
          z.object({
            key: z.string().meta({ description: "The member's primary key value (no other member data)" }),
            phases: z.array(
              z.object({
                phase: z.string(),
                dueAt: nullableTimestamp.meta({ description: "batch start − offset; null when manual" }),
                when: z.string().nullable().meta({
                  description: "The phase's when: condition as written, decided with each of its steps",
                }),
                steps: z.array(plannedStepSchema),
              }),
            ),
          }),
        ),
      }),
    ),
  })
  .meta({
    id: "RunbookPlan",
    description: "What a batch of these members would run, step by step; nothing is written",
  });
