import { isSecretName, MASKED } from "@matoolkit/domain";
import { z } from "zod";
import { notFound } from "../http/api-error.ts";
import { positiveId } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import { id } from "../openapi/wire-types.ts";
import { memberOfChange, membersForAttribution } from "../read-models/tenant-change-members.ts";

/** One write the worker's simulated tenant recorded. */
export interface TenantChange {
  readonly sequence: number;
  readonly at: string;
  readonly api: "graph" | "exchange";
  readonly operation: string;
  readonly target: string;
  readonly detail: string;
}

/**
 * The simulated tenant's write log, when this process's worker runs against one (all-in-one
 * wires it from the worker); undefined for no tenant or a real one, which keeps its own audit log.
 */
export type TenantChangeSource = () => Promise<readonly TenantChange[]>;

export const tenantChangeSchema = z
  .object({
    sequence: z.number().int().meta({ description: "1 for the first write since the tenant started" }),
    at: z.string().meta({ description: "When the simulated tenant applied it (ISO 8601)" }),
    member: z
      .string()
      .nullable()
      .meta({
        description:
          "The member key of the batch member the change is about (its UPN or address is the object " +
          "changed, or is named in the change); null for objects of no member",
      }),
    batchId: id.nullable().meta({ description: "That member's batch" }),
    api: z.enum(["graph", "exchange"]),
    operation: z.string().meta({ description: "The Graph request or Exchange cmdlet, e.g. `Set-MailUser`" }),
    target: z.string().meta({ description: "The object written: a UPN, a group's name, a recipient" }),
    detail: z
      .string()
      .meta({ description: "What changed (properties and new values; secret-looking ones masked)" }),
  })
  .meta({ id: "TenantChange" });

/**
 * `name=value` pairs whose name looks secret (the one list of @matoolkit/domain) read `name=***`:
 * the simulator records property values as written, and a custom function could write a secret.
 */
export function maskSecretProperties(detail: string): string {
  return detail.replace(
    /(^|[\s,;(])([A-Za-z][\w.-]*)=("(?:[^"\\]|\\.)*"|[^,;\s)]*)/gu,
    (whole, before: string, name: string) => (isSecretName(name) ? `${before}${name}=${MASKED}` : whole),
  );
}

/**
 * GET /api/tenant/changes: what the rehearsal changed in the simulated tenant, oldest first.
 * Read access, like the batch reads: it shows the tenant objects (UPNs, addresses) an operator
 * already sees as member keys and data in `batch members`, and the values the steps wrote, which
 * are in `batch steps`' params. Masked as every read is (docs/secret-masking.md): the values of
 * properties whose name looks secret, and the members' known secret values wherever they appear.
 */
export const tenantChangeOperations = [
  defineOperation({
    method: "get",
    path: "/api/tenant/changes",
    operationId: "listTenantChanges",
    tag: "tenant",
    summary: "What the worker wrote to its simulated tenant, oldest first",
    description:
      "Only a simulated tenant records its writes (MATOOLKIT_TENANT=simulated, the default of " +
      "`npm start`): 404 `resource.not_found` when the worker runs against no tenant or a real one " +
      "(a real tenant's changes are in its own audit logs), or in another process.",
    access: "read",
    query: z.object({
      batchId: positiveId.optional().meta({ description: "Only the changes about this batch's members" }),
    }),
    errors: ["resource.not_found"],
    responses: {
      200: { description: "Every change, oldest first", schema: z.array(tenantChangeSchema) },
    },
  }).handle(async ({ deps, query }) => {
    if (deps.tenantChanges === undefined) {
      throw notFound(
        "No tenant change log: only a simulated tenant in this process records its changes " +
          "(start with MATOOLKIT_TENANT=simulated, the default of npm start)",
      );
    }
    const changes = await deps.tenantChanges();
    const { members, secrets } = await membersForAttribution(deps.db, query.batchId);
    const attributed = changes.map((change) => {
      const member = memberOfChange(change, members);
      return {
        sequence: change.sequence,
        at: change.at,
        member: member?.memberKey ?? null,
        batchId: member?.batchId ?? null,
        api: change.api,
        operation: change.operation,
        target: secrets.maskText(change.target),
        detail: secrets.maskText(maskSecretProperties(change.detail)),
      };
    });
    const body = query.batchId === undefined ? attributed : attributed.filter((c) => c.member !== null);
    return { status: 200, body };
  }),
];
