import { purgeEndedBatches } from "@matoolkit/commands";
import { eraseMemberKey, isRunningBatchStatus, listMemberKeyRows } from "@matoolkit/db";
import { batchMachine } from "@matoolkit/domain";
import { z } from "zod";
import { conflict, notFound } from "../http/api-error.ts";
import { nonEmptyText } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import { count, id, timestamp } from "../openapi/wire-types.ts";

const flag = (description: string) =>
  z
    .stringbool({ truthy: ["true"], falsy: ["false"], error: "must be true or false" })
    .default(false)
    .meta({ description });

export const purgeReportSchema = z
  .object({
    dryRun: z.boolean(),
    mode: z.enum(["scrub", "delete"]).meta({ description: "MATOOLKIT_RETENTION_MODE" }),
    retentionDays: z.int().min(1).meta({ description: "MATOOLKIT_RETENTION_DAYS" }),
    endedBefore: timestamp.meta({ description: "Batches that ended before this are due" }),
    batches: z.array(
      z.object({
        batchId: id,
        status: z.enum(batchMachine.terminal),
        endedAt: timestamp,
        members: count.meta({ description: "Member rows of the batch (every status)" }),
      }),
    ),
    more: z.boolean().meta({ description: "More batches are due than one request takes: run it again" }),
  })
  .meta({ id: "PurgeReport" });

export const memberErasureSchema = z
  .object({
    batchIds: z.array(id).meta({ description: "Every batch the key is or was a member of" }),
    erasedMembers: count.meta({ description: "Member rows erased now (0 when all were erased before)" }),
    erasedSteps: count.meta({ description: "Step executions whose params, results or errors were emptied" }),
  })
  .meta({ id: "MemberErasure" });

/**
 * Retention and erasure of personal data (issue 31 item 2; docs/admin-api.md, SECURITY.md
 * "Data retention"). Admin only: both remove data for good.
 */
export const retentionOperations = [
  defineOperation({
    method: "post",
    path: "/api/purge",
    operationId: "purgeEndedBatches",
    tag: "batches",
    summary: "Purge the personal data of batches ended more than MATOOLKIT_RETENTION_DAYS ago, now",
    description:
      "What the scheduler's daily job does, now: each batch that ended (completed, failed, " +
      "cancelled) more than MATOOLKIT_RETENTION_DAYS days ago loses its members' data and its " +
      "steps' params, results and error messages (`scrub`: keys and statuses kept), or its " +
      "member, phase, step and init rows (`delete`), per MATOOLKIT_RETENTION_MODE; it is then " +
      "marked `purgedAt` with an audit row (the caller as actor). `dryRun=true` lists the batches " +
      "that would be purged and changes nothing. At most 500 batches per request (`more`). " +
      "409 when retention is off (MATOOLKIT_RETENTION_DAYS=0 or off).",
    access: "Admin",
    query: z.object({ dryRun: flag("List what would be purged; change nothing") }),
    errors: ["state.conflict"],
    responses: {
      200: { description: "The batches purged (or, in a dry run, due)", schema: purgeReportSchema },
    },
  }).handle(async ({ query, principal, deps }) => {
    const { retentionDays: days, retentionMode: mode } = deps.retention;
    if (days === 0)
      throw conflict("retention is off (MATOOLKIT_RETENTION_DAYS is 0 or off): nothing is purged");
    const report = await purgeEndedBatches(deps.db, {
      policy: { days, mode },
      now: new Date(),
      dryRun: query.dryRun,
      actor: principal.identity,
    });
    return {
      status: 200,
      body: {
        ...report,
        retentionDays: days,
        batches: report.batches.map((batch) => ({
          ...batch,
          status: batch.status as (typeof batchMachine.terminal)[number],
        })),
      },
    };
  }),

  defineOperation({
    method: "delete",
    path: "/api/members/{key}",
    operationId: "eraseMember",
    tag: "batches",
    summary: "Erase one person's data in every batch (a data-subject request)",
    description:
      "Every member row with this key, in every batch, loses its data and worker output, and its " +
      "steps lose their params, results, error messages and for_each values; each row is marked " +
      "`erasedAt` with an audit row (the caller as actor). The key and the statuses stay, for " +
      "the record. Refused (409, nothing changed) while the key is a member of a batch that is " +
      "still running, unless `force=true` (a running step may then fail for want of data, and an " +
      "automated batch refreshes the member's data from its source at the next tick: remove the " +
      "person from the source first). Repeating the request erases nothing more (`erasedMembers` " +
      "0). 404 when no batch ever had the key. Honours Idempotency-Key.",
    access: "Admin",
    acceptsIdempotencyKey: true,
    pathHoldsPersonalData: true,
    params: z.object({
      key: nonEmptyText.meta({ description: "The member key (the source's primary key)" }),
    }),
    query: z.object({ force: flag("Erase even where the member's batch is still running") }),
    errors: ["resource.not_found", "state.conflict"],
    responses: { 200: { description: "The member's data is erased", schema: memberErasureSchema } },
  }).handle(async ({ params, query, principal, deps }) =>
    deps.db.transaction().execute(async (trx) => {
      const rows = await listMemberKeyRows(trx, params.key);
      // The key is the person's identifier: it is never echoed in an answer or a log.
      if (rows.length === 0) throw notFound("no batch has a member with this key");
      const running = [
        ...new Set(rows.filter((row) => isRunningBatchStatus(row.batchStatus)).map((r) => r.batchId)),
      ];
      if (running.length > 0 && !query.force) {
        throw conflict(
          `the member is in running batch(es) ${running.join(", ")}: cancel them, wait for them to end, or send force=true`,
        );
      }
      const erased = await eraseMemberKey(trx, params.key, principal.identity);
      return {
        status: 200 as const,
        body: {
          batchIds: [...new Set(rows.map((row) => row.batchId))],
          erasedMembers: erased.members,
          erasedSteps: erased.steps,
        },
      };
    }),
  ),
];
