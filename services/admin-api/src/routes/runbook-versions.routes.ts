import { z } from "zod";
import {
  deactivateRunbookVersionCommand,
  type DeactivateResult,
} from "../commands/deactivate-runbook-version.ts";
import { nonEmptyText, positiveId } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import { id } from "../openapi/wire-types.ts";

/** 200: the version after the request (it is kept, never deleted, only inactive). */
export const deactivateRunbookVersionResponseSchema = z
  .object({
    id,
    name: z.string(),
    version: z.int().min(1),
    isActive: z.literal(false),
    alreadyInactive: z
      .boolean()
      .meta({ description: "True when the version was already inactive: the request changed nothing" }),
  })
  .meta({ id: "DeactivatedRunbookVersion" });
export type DeactivateRunbookVersionResponse = z.output<typeof deactivateRunbookVersionResponseSchema>;

/**
 * 000 "Deactivate version". 404 unknown runbook or version; 409 while automated batches of the
 * runbook are in flight (see deactivateRunbookVersionCommand for why, and for what deactivating
 * the active version does).
 */
export const runbookVersionOperations = [
  defineOperation({
    method: "delete",
    path: "/api/runbooks/{name}/versions/{version}",
    operationId: "deactivateRunbookVersion",
    tag: "runbooks",
    summary: "Deactivate a runbook version (it is kept, never deleted)",
    description:
      "Deactivating the active version leaves the runbook without one until the next publish: no " +
      "new batches, manual or automated; running manual batches go on with their version. Any " +
      "other version is already inactive and answers 200 with alreadyInactive. Refused (409) while " +
      "automated batches of the runbook are in flight: their member sync needs an active version.",
    access: "Admin",
    params: z.object({
      name: nonEmptyText.meta({ description: "Runbook name" }),
      version: positiveId.meta({ description: "Version number" }),
    }),
    errors: ["resource.not_found", "state.conflict"],
    responses: {
      200: { description: "The version, now inactive", schema: deactivateRunbookVersionResponseSchema },
    },
  }).handle(async ({ params, principal, deps }) => ({
    status: 200,
    body: presentDeactivation(
      await deactivateRunbookVersionCommand(deps.db, params.name, params.version, principal.identity),
    ),
  })),
];

export function presentDeactivation({
  runbook,
  alreadyInactive,
}: DeactivateResult): DeactivateRunbookVersionResponse {
  return { id: runbook.id, name: runbook.name, version: runbook.version, isActive: false, alreadyInactive };
}
