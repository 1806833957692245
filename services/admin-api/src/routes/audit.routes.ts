import { listAuditEvents } from "@matoolkit/db";
import { z } from "zod";
import { nonEmptyText, positiveId, wholeNumber } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import { id, timestamp } from "../openapi/wire-types.ts";
import { maskEventReasons } from "../read-models/event-secrets.ts";

/** What an audit row can be about (events.entity, migrations 0011 and 0012). */
const auditEntities = [
  "batch",
  "member",
  "phase",
  "step",
  "init",
  "runbook",
  "automation",
  "webhook",
  // Never listed (alerts are the system's own, without an actor); here so every events row types.
  "alert",
] as const;

export const auditEventSchema = z
  .object({
    id,
    at: timestamp,
    actor: z
      .string()
      .meta({ description: "The operator's identity (token preferred_username, name or oid)" }),
    entity: z.enum(auditEntities),
    entityId: id.meta({
      description:
        "The row it changed: batch, member, phase, step or init id; for `runbook` the version's id; " +
        "for `automation` the id of the version active when the switch flipped; for `webhook` the webhook's id",
    }),
    batchId: id.nullable().meta({ description: "Null for runbook, automation and webhook rows" }),
    fromStatus: z.string().nullable().meta({ description: "Null when the write created the entity" }),
    toStatus: z.string(),
    reason: z.string().nullable(),
  })
  .meta({ id: "AuditEvent" });

/**
 * The audit trail (issue 12): every write an operator made through this API, oldest first:
 * runbook publish and deactivation, the automation switch, batch creation, advance, cancel, pause,
 * resume, redrive, a phase's approval or rejection, members added and removed, webhooks created, pinged and deleted (never their
 * URL, which may carry a token, nor their secret). One row per change, written in the change's own
 * transaction (events with an actor; the system's own changes have none and are not listed).
 *
 * Access `read`: every fact in it is already readable by a Reader (created_by, enabled_by, the
 * batch timelines with their actors), and auditors should not need a role that can change things.
 */
export const auditOperations = [
  defineOperation({
    method: "get",
    path: "/api/audit",
    operationId: "listAuditEvents",
    tag: "audit",
    summary: "Page through what operators did (who, when, what), oldest first",
    description:
      "Each row is one write made on an operator's behalf, with the identity from their token. " +
      "Pages by id: pass the last id seen as `afterId`. When more rows follow, the response has a " +
      '`Link: </api/audit?afterId=…&limit=…>; rel="next"` header (with the same filters); no Link ' +
      "header means this page reached the end (for now: poll with the last id to follow the trail).",
    access: "read",
    query: z.object({
      afterId: wholeNumber(0, Number.MAX_SAFE_INTEGER)
        .default(0)
        .meta({ description: "The last audit id already seen: only rows with a larger id" }),
      limit: wholeNumber(1, 1000).default(100).meta({ description: "At most this many" }),
      actor: nonEmptyText.optional().meta({ description: "Only this operator's writes (exact identity)" }),
      batchId: positiveId
        .optional()
        .meta({ description: "Only writes to this batch and its members, phases, steps" }),
    }),
    responses: {
      200: {
        description: "A page of audit rows",
        schema: z.array(auditEventSchema),
        headers: {
          Link: {
            description: 'When another page follows: `<next page URL>; rel="next"`',
            schema: z.string(),
          },
        },
      },
    },
  }).handle(async ({ query, deps }) => {
    // One row more than asked tells whether another page follows, without a count.
    const rows = await listAuditEvents(deps.db, { ...query, limit: query.limit + 1 });
    // Reasons with the members' secret values masked, as on every read (issue 25).
    const page = await maskEventReasons(deps.db, rows.slice(0, query.limit));
    const items = page.map((row) => ({
      id: row.id,
      at: row.at,
      actor: row.actor ?? "",
      entity: row.entity,
      entityId: row.entityId,
      batchId: row.batchId,
      fromStatus: row.fromStatus,
      toStatus: row.toStatus,
      reason: row.reason,
    }));
    const last = items.at(-1);
    if (rows.length <= query.limit || last === undefined) return { status: 200, body: items };
    const next = new URLSearchParams({ afterId: String(last.id), limit: String(query.limit) });
    if (query.actor !== undefined) next.set("actor", query.actor);
    if (query.batchId !== undefined) next.set("batchId", String(query.batchId));
    return { status: 200, body: items, headers: { Link: `</api/audit?${next.toString()}>; rel="next"` } };
  }),
];
